// The real CLIs (Codex, Claude Code, Qwen Code, Pi) and Polar's mini agent, each run inside a
// sandbox (process runtime under bwrap; Docker when an engine and h5's runtime are present)
// against the mock engine. The harness sees no network but loopback: it reaches its gateway
// session only through the loopback bridge and the rollout's unix socket. Evidence, per run:
// the sandbox's network devices (only lo), strace's record of every connect(2) in the sandbox
// (only 127.0.0.1:<bridge port> and the gateway socket), and every call recorded in the session.
// Missing CLIs / bwrap skip visibly, unless POLAR_REQUIRE_HARNESSES=1; without strace the
// connect(2) record is skipped visibly (the network-device, call and refusal checks still run).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { z } from "zod";
import type { Dialect } from "../protocol/calls.ts";
import type { SessionService } from "../node/gateway/session-service.ts";
import { getHarness, pinnedBinary, type HarnessKind, type PinnedCli } from "../node/harness/index.ts";
import { harnessMounts } from "../node/harness/sandbox-mounts.ts";
import { DEFAULT_BRIDGE_PORT, gatewaySocketFolder, runInSandbox } from "../node/harness/sandbox-runner.ts";
import { SANDBOX_GATEWAY_DIR, SANDBOX_RUN_DIR, type Sandbox } from "../node/runtime/types.ts";
import { ADMIN_TOKEN, startStack, type Stack } from "./helpers/stack.ts";
import { sandboxRuntimes, straceInSandbox, type RuntimeCase } from "./helpers/sandbox-runtimes.ts";

const FILE_CONTENT = "polar-sandbox-ok";
const SCRIPT = { steps: [{ shell: `printf ${FILE_CONTENT} > out.txt` }, { text: "Done." }] };
const INSTRUCTION = `Create a file out.txt containing ${FILE_CONTENT} using the shell, then say Done.`;
const MODEL = "Qwen/Qwen3-8B";
const RUN_TIMEOUT_MS = 300_000;
const REQUIRE_HARNESSES = process.env.POLAR_REQUIRE_HARNESSES === "1";
const STRACE_LOG = `${SANDBOX_RUN_DIR}/strace.log`;
const NETDEV_FILE = `${SANDBOX_RUN_DIR}/netdev.txt`;
/** strace's connect(2) record, when the host has strace (CI, which installs it, requires it). */
const TRACED = Bun.which("strace") !== null || REQUIRE_HARNESSES;

const CASES: { kind: HarnessKind; cli: PinnedCli | null; dialect: Dialect }[] = [
  { kind: "mini", cli: null, dialect: "chat" },
  { kind: "pi", cli: "pi", dialect: "chat" },
  { kind: "qwen-code", cli: "qwen-code", dialect: "chat" },
  { kind: "codex", cli: "codex", dialect: "responses" },
  { kind: "claude-code", cli: "claude-code", dialect: "anthropic" },
];

/** Each connect(2) strace saw: its family, address and outcome. */
function connects(straceLog: string): { family: string; address: string; line: string }[] {
  return straceLog
    .split("\n")
    .filter((line) => line.includes("connect("))
    .map((line) => {
      const family = /sa_family=(AF_[A-Z0-9]+)/.exec(line)?.[1] ?? "?";
      const unix = /sun_path="([^"]*)"/.exec(line)?.[1];
      const inet = /sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(line);
      const inet6 = /sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
      const address = unix ?? (inet ? `${inet[2]}:${inet[1]}` : inet6 ? `[${inet6[2]}]:${inet6[1]}` : "?");
      return { family, address, line: line.trim() };
    });
}

/** Connects that are neither the bridge's port on loopback nor the gateway socket (nor netlink). */
function unexpectedConnects(straceLog: string, bridgePort: number): string[] {
  const gatewaySocket = `${SANDBOX_GATEWAY_DIR}/gateway.sock`;
  return connects(straceLog)
    .filter((c) => {
      if (c.family === "AF_NETLINK") return false;
      if (c.family === "AF_UNIX") return c.address !== gatewaySocket && !c.line.includes("ENOENT");
      return c.address !== `127.0.0.1:${bridgePort}`;
    })
    .map((c) => c.line);
}

let stack: Stack;
let sessions: SessionService;
const sandboxes: Sandbox[] = [];
const timings: Record<string, number> = {};

beforeAll(async () => {
  stack = await startStack({ engine: { script: SCRIPT, model: MODEL, maxModelLen: 40960 } });
  sessions = stack.gateway.sessions;
}, 120_000);
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.destroy()));
  await stack?.stop();
  if (Object.keys(timings).length > 0) console.log(`sandboxed harness run times (ms): ${JSON.stringify(timings)}`);
});

async function newSandbox(runtime: RuntimeCase): Promise<Sandbox> {
  const sandbox = await runtime.runtime!.create({
    spec: runtime.spec,
    labels: { node_id: "harness-sandbox-test" },
    mounts: [...harnessMounts(), ...(TRACED ? straceInSandbox(runtime).mounts : [])],
  });
  sandboxes.push(sandbox);
  return sandbox;
}

/** Writes the sandbox's network devices to the run folder, then runs strace around the rest. */
function evidencePrefix(runtime: RuntimeCase): string[] {
  return [
    "/bin/sh",
    "-c",
    `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' > ${NETDEV_FILE}; exec "$@"`,
    "sh",
    ...(TRACED ? [...straceInSandbox(runtime).command, "-f", "-qq", "-e", "trace=connect", "-o", STRACE_LOG] : []),
  ];
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

for (const runtime of await sandboxRuntimes()) {
  describe(`harnesses inside a ${runtime.name} sandbox`, () => {
    if (!runtime.runtime) {
      test.skip(`${runtime.name} sandbox [SKIPPED: ${runtime.missing}]`, () => {});
      return;
    }
    if (!TRACED)
      test.skip(`strace connect check in the ${runtime.name} sandbox [SKIPPED: strace not installed — apt-get install strace; the other checks still run]`, () => {});

    test("through its socket, a sandboxed program reaches neither the admin API nor another session", async () => {
      const sandbox = await newSandbox(runtime);
      const session = await sessions.open({ metadata: { test: "refusals" }, socketFolder: gatewaySocketFolder(sandbox) });
      const other = await sessions.open({ metadata: { test: "other" } });
      const gatewayPort = Number(new URL(stack.gateway.url).port);
      const probe = `
        const base = process.env.OPENAI_BASE_URL.replace(/\\/v1$/, "");
        const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
        const ask = async (path, key, init = {}) => (await fetch(base + path, { ...init, headers: { authorization: "Bearer " + key, "content-type": "application/json" } })).status;
        const net = await import("node:net");
        const tcp = await new Promise((done) => net.connect(${gatewayPort}, "127.0.0.1").on("connect", () => done("connected")).on("error", (e) => done(e.code)));
        console.log(JSON.stringify({
          admin_state: await ask("/v1/admin/state", ${JSON.stringify(ADMIN_TOKEN)}),
          session_api: await ask("/v1/sessions", ${JSON.stringify(ADMIN_TOKEN)}, { method: "POST", body: "{}" }),
          other_session: await ask("/v1/chat/completions", ${JSON.stringify(other.token)}, { method: "POST", body }),
          path_token: await ask("/s/${other.token}/v1/chat/completions", process.env.OPENAI_API_KEY, { method: "POST", body }),
          gateway_tcp: tcp,
        }));`;
      try {
        const result = await runInSandbox({
          sandbox,
          adapter: getHarness("command"),
          session: { token: session.token, openaiBaseUrl: session.openaiBaseUrl, anthropicBaseUrl: session.anthropicBaseUrl },
          model: MODEL,
          instruction: "probe",
          limits: { timeoutMs: 60_000 },
          // ESM: its top-level await runs on Node 18 (Debian bookworm's) too.
          options: { argv: ["node", "--input-type=module", "-e", probe] },
        });
        expect(result.error).toBeUndefined();
        const statuses = z
          .object({ admin_state: z.number(), session_api: z.number(), other_session: z.number(), path_token: z.number(), gateway_tcp: z.string() })
          .parse(JSON.parse(result.stdout.trim().split("\n").at(-1)!));
        expect(statuses).toEqual({ admin_state: 403, session_api: 403, other_session: 403, path_token: 403, gateway_tcp: "ECONNREFUSED" });
        expect(await stack.calls(other.id)).toEqual([]);
      } finally {
        await session.close();
        await other.close();
      }
    }, 120_000);

    for (const c of CASES) {
      const missing = c.cli !== null && !existsSync(pinnedBinary(c.cli));
      const name = `${c.kind} completes the scripted task, every call recorded, no connection but the bridge`;
      if (missing && !REQUIRE_HARNESSES) {
        test.skip(`${name} [SKIPPED: ${c.cli} not installed — run scripts/install-harnesses.sh]`, () => {});
        continue;
      }
      test(
        name,
        async () => {
          expect(missing ? `${c.cli} is not installed` : "installed").toBe("installed");
          const sandbox = await newSandbox(runtime);
          const session = await sessions.open({ metadata: { harness: c.kind, runtime: runtime.name }, socketFolder: gatewaySocketFolder(sandbox) });
          try {
            const result = await runInSandbox({
              sandbox,
              adapter: getHarness(c.kind),
              session: { token: session.token, openaiBaseUrl: session.openaiBaseUrl, anthropicBaseUrl: session.anthropicBaseUrl },
              model: MODEL,
              instruction: INSTRUCTION,
              limits: { timeoutMs: RUN_TIMEOUT_MS, maxTurns: 10 },
              options: { maxOutputTokens: 4096 },
              prefix: evidencePrefix(runtime),
            });
            timings[`${runtime.name}/${c.kind}`] = result.durationMs;
            if (result.exitCode !== 0) console.error(`${c.kind} in ${runtime.name} stderr:\n${result.stderr.slice(-3000)}`);
            expect(result.error).toBeUndefined();
            expect(result.exitCode).toBe(0);
            expect(result.bridged).toBe(true);
            expect(result.baseUrl).toBe(`http://127.0.0.1:${DEFAULT_BRIDGE_PORT}/v1`);
            expect(result.finalOutput).toContain("Done.");
            expect(text(await sandbox.readFile(`${sandbox.spec.workdir}/out.txt`))).toBe(FILE_CONTENT);

            const calls = await stack.calls(session.id);
            expect(calls.map((call) => call.seq)).toEqual([0, 1]);
            for (const call of calls) {
              expect(call.error).toBeNull();
              expect(call.dialect).toBe(c.dialect);
              expect(call.prompt_ids!.length).toBeGreaterThan(0);
              expect(call.output_ids!.length).toBeGreaterThan(0);
              expect(call.logprobs!.length).toBe(call.output_ids!.length);
            }
            expect(calls[0]!.response!.tool_calls[0]!.arguments).toContain(FILE_CONTENT);
            expect(calls[1]!.response!.content.trim()).toBe("Done.");

            // The sandbox's own evidence: only loopback, and strace saw no other peer.
            expect(
              text(await sandbox.readFile(NETDEV_FILE))
                .trim()
                .split("\n"),
            ).toEqual(["lo"]);
            if (!TRACED) return;
            const log = text(await sandbox.readFile(STRACE_LOG));
            const seen = connects(log);
            expect(seen.some((s) => s.address === `127.0.0.1:${DEFAULT_BRIDGE_PORT}`)).toBe(true);
            expect(seen.some((s) => s.address === `${SANDBOX_GATEWAY_DIR}/gateway.sock`)).toBe(true);
            expect(unexpectedConnects(log, DEFAULT_BRIDGE_PORT)).toEqual([]);
          } finally {
            await session.close();
          }
        },
        RUN_TIMEOUT_MS + 60_000,
      );
    }
  });
}

describe("the connect check can fail", () => {
  test("flags outside addresses and other sockets, accepts the bridge and the gateway socket", () => {
    const log = [
      `1 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)`,
      `1 connect(5, {sa_family=AF_INET, sin_port=htons(${DEFAULT_BRIDGE_PORT}), sin_addr=inet_addr("127.0.0.1")}, 16) = 0`,
      `2 connect(7, {sa_family=AF_UNIX, sun_path="${SANDBOX_GATEWAY_DIR}/gateway.sock"}, 110) = 0`,
      `3 connect(8, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.0.0.2")}, 16) = -1 ENETUNREACH`,
      `4 connect(9, {sa_family=AF_INET, sin_port=htons(8300), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 ECONNREFUSED`,
      `5 connect(9, {sa_family=AF_UNIX, sun_path="/run/dbus/system_bus_socket"}, 110) = 0`,
    ].join("\n");
    const lines = log.split("\n");
    expect(unexpectedConnects(log, DEFAULT_BRIDGE_PORT)).toEqual([lines[3]!, lines[4]!, lines[5]!]);
  });
});
