// Why: `polar gym` — a node with NeMo Gym's agent-server routes in front — configured from Gym's
// environment (as `python app.py` starts it), from a file holding the same agent block, or from
// flags alone; flags win. It runs until SIGINT/SIGTERM and then stops cleanly. `polar gym rows`
// writes a task file as a Gym dataset.
import { type FlagSpecs, UsageError, intFlag, listFlag, numberFlag, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { envLayer } from "../node-config.ts";
import { runtimeChoices } from "../runtime/registry.ts";
import { settingsFromBlock, settingsFromFile, settingsFromGymEnvironment } from "./config.ts";
import { startGymAgent } from "./server.ts";

const FLAGS: FlagSpecs = {
  "gym-env": { type: "boolean", help: "read NEMO_GYM_CONFIG_DICT and NEMO_GYM_CONFIG_PATH (what Gym sets for `python app.py`)" },
  config: { type: "string", help: "a file (YAML, JSON or TOML) holding one Gym agent block, optionally with policy_base_url / policy_model_name" },
  host: { type: "string", help: "address the agent server listens on", default: "127.0.0.1" },
  port: { type: "string", help: "port the agent server listens on (0 = any free port)", default: "0" },
  harness: { type: "string", help: "harness every rollout runs: codex | claude-code | qwen-code | pi | mini", default: "mini" },
  model: { type: "string", help: "model name given to the harness (default: policy_model_name)" },
  engine: { type: "string", multiple: true, help: "inference engine base URL (default: policy_base_url)" },
  tasks: { type: "string", help: "task file (JSONL) whose tasks rows may name (default: the bundled set)" },
  runtime: { type: "string", help: `sandbox runtime: ${runtimeChoices()}` },
  db: { type: "string", help: "the node's SQLite file" },
  "node-port": { type: "string", help: "port of the node's own API (rollout API, gateway)", default: "0" },
  "agent-timeout": { type: "string", help: "seconds a harness may run", default: "1800" },
  "max-context-drift": { type: "string", help: "template-aware: most context drift a call may add to the main line (0: exact prompts only)" },
  coordinator: { type: "string", help: "also serve a cluster: the coordinator's URL (env POLAR_COORDINATOR_URL; token from POLAR_NODE_TOKEN)" },
};

function defined(layer: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(layer).filter(([, v]) => v !== undefined));
}

const ROWS_FLAGS: FlagSpecs = {
  tasks: { type: "string", help: "task file (JSONL)", default: "the bundled set" },
  agent: { type: "string", help: "agent_ref.name of the rows: the Gym agent server's name", default: "polar_agent" },
  only: { type: "string", multiple: true, help: "only these task ids (repeatable)" },
};

/** `polar gym rows`: a Polar task file as a Gym dataset (JSONL on stdout), tasks without an evaluator left out. */
async function runRowsCli(argv: string[]): Promise<void> {
  const flags = parseFlags("gym rows", "write a task file as a NeMo Gym dataset (one row per task) to stdout", ROWS_FLAGS, argv);
  if (!flags) return;
  const { loadTaskFile } = await import("../../lib/task-file.ts");
  const { BUNDLED_TASKS_FILE } = await import("../api/task-catalog.ts");
  const { gymDatasetJsonl } = await import("./dataset.ts");
  const path = stringFlag(flags, "tasks") ?? BUNDLED_TASKS_FILE;
  const loaded = await loadTaskFile(path);
  if (loaded.issues.length > 0) throw new UsageError(`task file ${path}: ${loaded.issues.map((i) => `line ${i.line}: ${i.message}`).join("; ")}`);
  const only = new Set(listFlag(flags, "only"));
  const chosen = loaded.tasks.filter((t) => only.size === 0 || only.has(t.task_id));
  const scored = chosen.filter((t) => (t.evaluator?.strategy ?? "none") !== "none");
  if (scored.length < chosen.length)
    console.error(`polar gym rows: ${chosen.length - scored.length} task(s) without an evaluator left out (a Gym rollout needs a reward)`);
  process.stdout.write(gymDatasetJsonl(scored, stringFlag(flags, "agent") ?? "polar_agent"));
}

export async function runGymCli(argv: string[]): Promise<void> {
  if (argv[0] === "rows") return runRowsCli(argv.slice(1));
  const flags = parseFlags("gym", "a NeMo Gym agent server (POST /run, /aggregate_metrics) running each row as one Polar rollout", FLAGS, argv);
  if (!flags) return;
  const engines = listFlag(flags, "engine");
  const { coordinator: _fromEnv, ...env } = envLayer(process.env);
  const coordinator = stringFlag(flags, "coordinator") ?? process.env.POLAR_COORDINATOR_URL;
  const node = defined({
    ...defined(env),
    tasks: stringFlag(flags, "tasks"),
    runtime: stringFlag(flags, "runtime"),
    db: stringFlag(flags, "db"),
    port: intFlag(flags, "node-port"),
    engine: engines.length > 0 ? { urls: engines } : undefined,
    coordinator: coordinator ? { url: coordinator, token: process.env.POLAR_NODE_TOKEN } : undefined,
  });
  const overrides = defined({
    host: stringFlag(flags, "host"),
    port: intFlag(flags, "port"),
    harness: stringFlag(flags, "harness"),
    model: stringFlag(flags, "model"),
    agent_timeout_seconds: numberFlag(flags, "agent-timeout"),
    max_context_drift: intFlag(flags, "max-context-drift"),
    node,
  });
  const file = stringFlag(flags, "config");
  const settings =
    flags["gym-env"] === true
      ? settingsFromGymEnvironment(process.env, overrides)
      : file
        ? settingsFromFile(file, overrides)
        : settingsFromBlock({}, {}, "flags", overrides);
  const agent = await startGymAgent(settings);
  const config = agent.node.config;
  console.error(
    `polar gym: Gym agent server on ${agent.url} (harness ${settings.agent.harness}, model ${settings.agent.model}); node ${config.node_id} on ${agent.node.url} (runtime ${agent.node.runtime.backend}; engine ${config.engine.urls.join(", ")}${config.coordinator ? `; coordinator ${config.coordinator.url}` : ""})`,
  );
  const stop = async () => {
    await agent.stop();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
