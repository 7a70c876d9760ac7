// Why: `polar gateway` — turns flags and environment into a validated gateway config and a
// backend, starts the server, and stops cleanly on SIGINT/SIGTERM.
import { randomBytes } from "node:crypto";
import { type FlagSpecs, intFlag, listFlag, numberFlag, oneOf, onOffFlag, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { BACKEND_KINDS, SGLANG_MODES, TITO_ENGINES, type BackendKind } from "./backends/options.ts";
import { GatewayConfig } from "./config.ts";
import { createBackend } from "./backends/index.ts";
import { startGateway } from "./server.ts";
import { ENGINE_FLAGS } from "./engine-flags.ts";

const DEFAULT_ENGINE_URL = "http://127.0.0.1:8000";
/** The defaults the config schemas apply, so --help shows what really happens. */
const GATEWAY_DEFAULTS = GatewayConfig.parse({ adminToken: "-".repeat(16) });

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
  ...ENGINE_FLAGS,
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
