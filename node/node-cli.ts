// Why: `polar node` — config file, environment and flags into one validated NodeConfig, then the
// node runs until SIGINT/SIGTERM, when it stops cleanly (live rollouts stored as shutdown errors).
import { randomBytes } from "node:crypto";
import { type FlagSpecs, intFlag, listFlag, numberFlag, oneOf, onOffFlag, parseFlags, stringFlag } from "../lib/cli-args.ts";
import { SGLANG_MODES, TITO_ENGINES } from "./gateway/backends/options.ts";
import { envLayer, mergeLayers, NodeConfig, parseNodeConfig, readConfigFile } from "./node-config.ts";
import { startNode } from "./main.ts";
import { runtimeHelp } from "./runtime/registry.ts";
import { describeRolloutAccess } from "../lib/rollout-api/access.ts";
import { ENGINE_FLAGS } from "./gateway/engine-flags.ts";

const DEFAULTS = NodeConfig.parse({ admin_token: "-".repeat(16), open_rollout_api: true });

const FLAGS: FlagSpecs = {
  config: { type: "string", help: "settings file, JSON or TOML (env POLAR_NODE_CONFIG); flags override it" },
  "node-id": { type: "string", help: "node id labelling its sandboxes; keep it across restarts (env POLAR_NODE_ID)", default: DEFAULTS.node_id },
  host: { type: "string", help: "address to listen on", default: DEFAULTS.host },
  port: { type: "string", help: "port to listen on (0 = any free port)", default: String(DEFAULTS.port) },
  db: { type: "string", help: "SQLite file of the node (env POLAR_NODE_DB)", default: DEFAULTS.db },
  "admin-token": { type: "string", help: "token for the admin and session APIs (env POLAR_ADMIN_TOKEN; generated if unset)" },
  "rollout-token": { type: "string", help: "token for the rollout API, /rollout/* and /tasks (env POLAR_ROLLOUT_TOKEN; generated if unset, unless --open)" },
  open: { type: "boolean", help: "serve the rollout API without a token (only with a loopback --host)" },
  "metrics-require-admin-token": { type: "boolean", help: "/metrics answers only with the admin token" },
  runtime: { type: "string", help: `sandbox runtime: ${runtimeHelp()}`, default: DEFAULTS.runtime },
  engine: { type: "string", multiple: true, help: "inference engine base URL (repeat for several)", default: DEFAULTS.engine.urls[0] },
  backend: { type: "string", help: "engine backend (vllm, sglang, tito, openai)", default: DEFAULTS.engine.backend },
  model: { type: "string", help: "model name given to harnesses", default: DEFAULTS.engine.model },
  tasks: { type: "string", help: "task file (JSONL) whose task ids requests may name; default the bundled set" },
  "init-workers": { type: "string", help: "rollouts in INIT at once", default: String(DEFAULTS.workers.init) },
  "run-workers": { type: "string", help: "harnesses running at once", default: String(DEFAULTS.workers.run) },
  "postrun-workers": { type: "string", help: "rollouts in POSTRUN at once", default: String(DEFAULTS.workers.postrun) },
  "ready-backlog": { type: "string", help: "prepared rollouts waiting for a run slot", default: String(DEFAULTS.workers.ready_backlog) },
  "served-model": { type: "string", help: "model name sent to the engine (default: the harness's model name)" },
  ...ENGINE_FLAGS,
  coordinator: { type: "string", help: "join a cluster: the coordinator's URL (env POLAR_COORDINATOR_URL; its node token from env POLAR_NODE_TOKEN)" },
};

export async function runNodeCli(argv: string[]): Promise<void> {
  const flags = parseFlags("node", "the node agent: gateway, sandbox pool, rollout pipeline and Polar's rollout API", FLAGS, argv);
  if (!flags) return;
  const configPath = stringFlag(flags, "config") ?? process.env.POLAR_NODE_CONFIG;
  const engines = listFlag(flags, "engine");
  const flagLayer = {
    node_id: stringFlag(flags, "node-id"),
    host: stringFlag(flags, "host"),
    port: intFlag(flags, "port"),
    db: stringFlag(flags, "db"),
    admin_token: stringFlag(flags, "admin-token"),
    rollout_token: stringFlag(flags, "rollout-token"),
    open_rollout_api: flags.open === true ? true : undefined,
    metrics_require_admin_token: flags["metrics-require-admin-token"] === true ? true : undefined,
    runtime: stringFlag(flags, "runtime"),
    tasks: stringFlag(flags, "tasks"),
    engine: {
      urls: engines.length ? engines : undefined,
      backend: stringFlag(flags, "backend"),
      model: stringFlag(flags, "model"),
      served_model: stringFlag(flags, "served-model"),
      tokenizer: stringFlag(flags, "tokenizer"),
      timeout_ms: intFlag(flags, "timeout-ms"),
      retries: intFlag(flags, "retries"),
      token_splice: flags["token-splice"] === true || undefined,
      tito_engine: oneOf(flags, "tito-engine", TITO_ENGINES),
      sglang_mode: oneOf(flags, "sglang-mode", SGLANG_MODES),
      sglang_router: flags["sglang-router"] === true || undefined,
    },
    gateway: { cache_bytes: intFlag(flags, "cache-bytes") },
    workers: {
      init: intFlag(flags, "init-workers"),
      run: intFlag(flags, "run-workers"),
      postrun: intFlag(flags, "postrun-workers"),
      ready_backlog: intFlag(flags, "ready-backlog"),
    },
    sampling: {
      max_tokens_cap: intFlag(flags, "max-tokens-cap"),
      temperature: numberFlag(flags, "temperature"),
      top_p: numberFlag(flags, "top-p"),
      thinking: onOffFlag(flags, "thinking"),
    },
    coordinator: { url: stringFlag(flags, "coordinator") },
  };
  const merged = mergeLayers(configPath ? readConfigFile(configPath) : {}, envLayer(process.env), flagLayer);
  if (merged.admin_token === undefined) {
    merged.admin_token = `adm-${randomBytes(24).toString("base64url")}`;
    console.error(`polar node: no admin token set; generated one for this run: ${merged.admin_token}`);
  }
  if (merged.rollout_token === undefined && merged.open_rollout_api !== true) {
    merged.rollout_token = `rol-${randomBytes(24).toString("base64url")}`;
    console.error(`polar node: no rollout token set; generated one for this run: ${merged.rollout_token}`);
  }
  // A node token in the environment alone does not make this node join a cluster.
  const coordinator = merged.coordinator as { url?: unknown } | undefined;
  if (coordinator && coordinator.url === undefined) delete merged.coordinator;
  const config = parseNodeConfig(pruneEmpty(merged));
  const node = await startNode(config);
  const r = node.recovery;
  console.error(
    `polar node: ${config.node_id} listening on ${node.url} (runtime ${node.runtime.backend}${node.runtime.isolated ? "" : ", NOT isolated"}; engine ${config.engine.urls.join(", ")}; db ${config.db}; ${describeRolloutAccess(node.rolloutAccess)})`,
  );
  if (r.rolloutsFailed || r.sandboxesRemoved)
    console.error(`polar node: after restart: ${r.rolloutsFailed} unfinished rollout(s) reported ERROR, ${r.sandboxesRemoved} leftover sandbox(es) removed`);
  const stop = async () => {
    await node.stop();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** Drops empty objects a flag layer leaves (so a nested default still applies). */
function pruneEmpty(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const inner = pruneEmpty(v as Record<string, unknown>);
      if (Object.keys(inner).length > 0) out[k] = inner;
    } else if (v !== undefined) out[k] = v;
  }
  return out;
}
