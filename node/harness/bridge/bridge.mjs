// Why: inside a sandbox without network the harness still needs an HTTP base URL. This bridge
// listens on 127.0.0.1:<port> inside the sandbox and forwards every connection to the rollout's
// gateway unix socket; once it listens it starts the harness (stdin closed) and exits with it.
// Plain JavaScript on Node's standard library only, so it runs with whatever node the sandbox has.
// Usage: node bridge.mjs <port> <socket-path> [-- <harness argv...>]
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const [portArg, socketPath, separator, ...harness] = process.argv.slice(2);
const port = Number(portArg);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !socketPath || (separator !== undefined && separator !== "--")) {
  process.stderr.write("usage: node bridge.mjs <port> <socket-path> [-- <harness argv...>]\n");
  process.exit(2);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  const drop = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", drop);
  upstream.on("error", drop);
  client.on("close", () => upstream.end());
  upstream.on("close", () => client.end());
});

server.on("error", (err) => {
  process.stderr.write(`polar bridge: cannot listen on 127.0.0.1:${port}: ${err.message}\n`);
  process.exit(97);
});

server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  if (harness.length === 0) {
    process.stdout.write(`listening ${address.port}\n`);
    return;
  }
  const child = spawn(harness[0], harness.slice(1), { stdio: ["ignore", "inherit", "inherit"] });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (err) => {
    process.stderr.write(`polar bridge: cannot start ${harness[0]}: ${err.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    server.close();
    process.exit(code ?? 128 + (signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : 1));
  });
});
