// Why: `polar gateway` and `polar node` take the same flags for the engine backend and the
// gateway's caches and sampling overrides; their specs and help texts (with the defaults the
// config schemas really apply) are written once here.
import type { FlagSpecs } from "../../lib/cli-args.ts";
import { BackendOptions, SGLANG_MODES, TITO_ENGINES } from "./backends/options.ts";
import { GatewayConfig } from "./config.ts";

const GATEWAY_DEFAULTS = GatewayConfig.parse({ adminToken: "-".repeat(16) });
const BACKEND_DEFAULTS = BackendOptions.parse({ urls: ["http://127.0.0.1:8000"] });

export const ENGINE_FLAGS: FlagSpecs = {
  tokenizer: { type: "string", help: "model folder (tokenizer.json + tokenizer_config.json) for tito and count_tokens" },
  "timeout-ms": { type: "string", help: "per-call engine deadline", default: String(BACKEND_DEFAULTS.timeoutMs) },
  retries: { type: "string", help: "extra engine attempts on connect errors and 5xx", default: String(BACKEND_DEFAULTS.retries) },
  "token-splice": { type: "boolean", help: "tito: reuse earlier turns' sampled ids in the prompt" },
  "tito-engine": { type: "string", help: `tito: engine API that receives token ids: ${TITO_ENGINES.join(" | ")}`, default: BACKEND_DEFAULTS.titoEngine },
  "sglang-mode": {
    type: "string",
    help: `sglang: ${SGLANG_MODES.join(" | ")} (OpenAI chat endpoint, or /generate with token ids)`,
    default: BACKEND_DEFAULTS.sglangMode,
  },
  "sglang-router": { type: "boolean", help: "sglang: --engine URLs are sglang-router URLs; call their workers directly" },
  "cache-bytes": {
    type: "string",
    help: "bytes all per-session caches of the gateway together may hold (least recently used go first)",
    default: String(GATEWAY_DEFAULTS.cacheBytes),
  },
  "max-tokens-cap": { type: "string", help: "cap every LLM call's max_tokens (harnesses ask for up to 32000)" },
  temperature: { type: "string", help: "force this sampling temperature on every call" },
  "top-p": { type: "string", help: "force this top_p on every call" },
  thinking: { type: "string", help: "force thinking on or off for every call: on | off" },
};
