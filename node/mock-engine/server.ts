// Why: the in-process factory tests use (port 0) and the CLI runs: one Bun.serve around the
// dialect's hono app, with a live call counter, a request log and a clean stop.
import type { Hono } from "hono";
import type { EngineContext } from "./context.ts";
import { CallGate } from "./faults.ts";
import { MockModel } from "./model.ts";
import { MockEngineOptionsSchema, type MockEngineOptionsInput } from "./options.ts";
import { mountPolicyRoutes } from "./policy-routes.ts";
import { sglangApp } from "./sglang-routes.ts";
import { vllmApp } from "./vllm-routes.ts";

export interface RunningMockEngine {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  stop(): Promise<void>;
  /** Generation calls received so far (chat, completions, /generate). */
  readonly calls: number;
  /** `METHOD /path` of every request received, in arrival order (which API a client used). */
  readonly requests: readonly string[];
}

export function mockEngineApp(ctx: EngineContext): Hono {
  const app = ctx.options.dialect === "sglang" ? sglangApp(ctx) : vllmApp(ctx);
  if (ctx.model.trainable) mountPolicyRoutes(app, ctx.model.trainable, ctx.options.policyToken!);
  return app;
}

export async function startMockEngine(input: MockEngineOptionsInput = {}): Promise<RunningMockEngine> {
  const options = MockEngineOptionsSchema.parse(input);
  const ctx: EngineContext = { options, model: new MockModel(options), gate: new CallGate(options) };
  const app = mockEngineApp(ctx);
  const requests: string[] = [];
  const fetch = (request: Request) => {
    requests.push(`${request.method} ${new URL(request.url).pathname}`);
    return app.fetch(request);
  };
  // idleTimeout 0: hung calls and slow latency models must not be cut by the server.
  const server = Bun.serve({ hostname: options.host, port: options.port, fetch, idleTimeout: 0 });
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${server.port}`,
    async stop() {
      await server.stop(true);
    },
    get calls() {
      return ctx.gate.calls;
    },
    get requests() {
      return requests;
    },
  };
}
