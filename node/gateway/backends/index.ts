// Why: one place turns a backend kind + options into a ready Backend, so the gateway CLI, the node
// agent and tests configure engines the same way.
import { AnthropicBackend } from "./anthropic.ts";
import type { Backend } from "./backend.ts";
import { EngineClient } from "./engine-client.ts";
import { OpenAiBackend } from "./openai.ts";
import { BackendOptions, type BackendKind, type BackendOptionsInput } from "./options.ts";
import { SglangBackend } from "./sglang.ts";
import { RouterWorkerDiscovery } from "./sglang-router.ts";
import { TitoBackend } from "./tito.ts";
import { VllmBackend } from "./vllm.ts";

export { BACKEND_KINDS, BackendOptions, type BackendKind, type BackendOptionsInput } from "./options.ts";
export type { Backend, EngineCall, EngineResult, TokenCapture } from "./backend.ts";

/** How often the sglang backend re-lists a router's workers. */
export const ROUTER_REFRESH_MS = 30_000;

export function createBackend(kind: BackendKind, input: BackendOptionsInput): Backend {
  const options = BackendOptions.parse(input);
  const client = new EngineClient(options);
  switch (kind) {
    case "vllm":
      return new VllmBackend(client, options.model);
    case "openai":
      return new OpenAiBackend(client, { servedModel: options.model, passReasoning: options.passReasoning });
    case "anthropic":
      return new AnthropicBackend(new EngineClient({ ...options, apiKey: undefined }), { servedModel: options.model, apiKey: options.apiKey });
    case "tito":
      return new TitoBackend(client, { ...titoOptions(options), engine: options.titoEngine });
    case "sglang":
      if (options.sglangMode === "generate") {
        return new TitoBackend(client, { ...titoOptions(options), engine: "sglang", name: "sglang" });
      }
      return new SglangBackend(client, {
        servedModel: options.model,
        ...(options.router && {
          discovery: new RouterWorkerDiscovery(options.urls, (workers) => client.pool.setUrls(workers), {
            refreshMs: ROUTER_REFRESH_MS,
            timeoutMs: Math.min(options.timeoutMs, 10_000),
            apiKey: options.apiKey,
          }),
        }),
      });
  }
}

function titoOptions(options: BackendOptions) {
  return {
    tokenSplice: options.tokenSplice,
    tokenizer: options.tokenizer,
    servedModel: options.model,
    maxSessions: options.maxSessions,
  };
}
