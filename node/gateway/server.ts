// Why: binds a gateway app to a port with the settings long LLM calls need (no idle timeout),
// owning the store it opened so stop() releases both.
import type { Backend } from "./backends/backend.ts";
import { openNodeStore } from "../store/db.ts";
import { createGatewayApp, type GatewayApp } from "./app.ts";
import { GatewayConfig, type GatewayConfigInput } from "./config.ts";
import type { LogSink } from "./request-log.ts";

export interface RunningGateway extends GatewayApp {
  url: string;
  config: GatewayConfig;
  stop(): Promise<void>;
}

export interface GatewayExtras {
  /** Structured log sink (default: stderr). */
  log?: LogSink;
}

export async function startGateway(input: GatewayConfigInput, backend: Backend, extras: GatewayExtras = {}): Promise<RunningGateway> {
  const config = GatewayConfig.parse(input);
  const store = await openNodeStore(config.db);
  const gateway = createGatewayApp({ config, store, backend, log: extras.log });
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    fetch: gateway.app.fetch,
    // An engine call can take minutes; Bun's default 10 s idle timeout would cut it.
    idleTimeout: 0,
    // No cap here: the app counts body bytes itself (routes/json-body.ts), so every body over
    // the limit, declared or chunked, gets the 413 in the shape of the API it was sent to.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  });
  const url = `http://${config.host}:${server.port}`;
  gateway.setBaseUrl(url);
  return {
    ...gateway,
    url,
    config,
    async stop() {
      await server.stop(true);
      gateway.close();
      store.close();
    },
  };
}
