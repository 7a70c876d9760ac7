// Why: `polar gateway` — turns flags and environment into a validated gateway config and a
// backend, starts the server, and stops cleanly on SIGINT/SIGTERM.
import { randomBytes } from "node:crypto";
import { type FlagSpecs, intFlag, listFlag, numberFlag, oneOf, onOffFlag, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { BACKEND_KINDS, BackendOptions, SGLANG_MODES, TITO_ENGINES, type BackendKind } from "./backends/options.ts";
import { GatewayConfig } from "./config.ts";
import { createBackend } from "./backends/index.ts";
import { startGateway } from "./server.ts";

const DEFAULT_ENGINE_URL = "http://127.0.0.1:8000";
/** The defaults the config schemas apply, so --help shows what really happens. */
const GATEWAY_DEFAULTS = GatewayConfig.parse({ adminToken: "-".repeat(16) });
const BACKEND_DEFAULTS = BackendOptions.parse({ urls: [DEFAULT_ENGINE_URL] });

const FLAGS: FlagSpecs = {
  host: { type: "string", help: "address to listen on", default: GATEWAY_DEFAULTS.host },
  port: { type: "string", help: "port to listen on (0 = any free port)", default: String(GATEWAY_DEFAULTS.port) },
  db: { type: "string", help: "SQLite file for sessions and recorded calls", default: GATEWAY_DEFAULTS.db },
  backend: { type: "string", help: `engine backend: ${BACKEND_KINDS.join(" | ")}`, default: "vllm" },
  engine: { type: "string", multiple: true, help: "engine base URL (repeat for several engines)", default: DEFAULT_ENGINE_URL },
  model: { type: "string", help: "served model name sent to the engine (default: the client's model name)" },
  "admin-token": { type: "string", help: "token for the session/admin API (env POLAR_ADMIN_TOKEN; generated if unset)" },
  open: { type: "boolean", help: "every unknown API key becomes its own session (offline data generation)" },
  "public-url": { type: "string", help: "base URL clients should use, if not the listening address" },
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
    help: "bytes all per-session caches together may hold (least recently used go first)",
    default: String(GATEWAY_DEFAULTS.cacheBytes),
  },
  "max-tokens-cap": { type: "string", help: "cap every call's max_tokens (harnesses ask for up to 32000)" },
  temperature: { type: "string", help: "force this sampling temperature on every call" },
  "top-p": { type: "string", help: "force this top_p on every call" },
  thinking: { type: "string", help: "force thinking on or off for every call: on | off" },
};

export async function runGatewayCli(argv: string[]): Promise<void> {
  const flags = parseFlags("gateway", "the LLM gateway harnesses call instead of an LLM API", FLAGS, argv);
  if (!flags) return;
  const kind: BackendKind = oneOf(flags, "backend", BACKEND_KINDS) ?? "vllm";
  const engines = listFlag(flags, "engine");
  const tokenizer = stringFlag(flags, "tokenizer");
  const backend = createBackend(kind, {
    urls: engines.length ? engines : [DEFAULT_ENGINE_URL],
    model: stringFlag(flags, "model"),
    timeoutMs: intFlag(flags, "timeout-ms"),
    retries: intFlag(flags, "retries"),
    tokenizer,
    tokenSplice: flags["token-splice"] === true,
    titoEngine: oneOf(flags, "tito-engine", TITO_ENGINES),
    sglangMode: oneOf(flags, "sglang-mode", SGLANG_MODES),
    router: flags["sglang-router"] === true,
  });
  let adminToken = stringFlag(flags, "admin-token") ?? process.env.POLAR_ADMIN_TOKEN;
  if (!adminToken) {
    adminToken = `adm-${randomBytes(24).toString("base64url")}`;
    console.error(`polar gateway: no --admin-token or POLAR_ADMIN_TOKEN; generated one for this run: ${adminToken}`);
  }
  const gateway = await startGateway(
    {
      host: stringFlag(flags, "host"),
      port: intFlag(flags, "port"),
      db: stringFlag(flags, "db"),
      adminToken,
      open: flags.open === true,
      publicUrl: stringFlag(flags, "public-url"),
      tokenizer,
      cacheBytes: intFlag(flags, "cache-bytes"),
      maxTokensCap: intFlag(flags, "max-tokens-cap"),
      temperature: numberFlag(flags, "temperature"),
      topP: numberFlag(flags, "top-p"),
      thinking: onOffFlag(flags, "thinking"),
    },
    backend,
  );
  console.error(`polar gateway: listening on ${gateway.url} (backend ${kind} → ${engines.join(", ") || DEFAULT_ENGINE_URL}; db ${gateway.config.db})`);
  const stop = async () => {
    await gateway.stop();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
