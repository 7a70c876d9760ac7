// Why: `polar gym` is configured the way Gym configures every agent server — one block of Gym's
// global config (NEMO_GYM_CONFIG_DICT, a YAML text, and NEMO_GYM_CONFIG_PATH, the block's name),
// with the policy endpoint from `policy_base_url` / `policy_model_name` or the block's
// `model_server` — or by a file with the same block; it is read and validated once, here, and
// split into the Gym agent's settings and a layer of `polar node` settings.
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { z } from "zod";
import { HARNESS_KINDS } from "../../protocol/harness-names.ts";
import { PolarError } from "../../protocol/errors.ts";
import { mergeLayers } from "../node-config.ts";

/** Merge strategies whose traces can be cut into NeMo RL's per-call token bundles. */
export const GYM_TRAJECTORY_STRATEGIES = ["template-aware", "prefix-merge"] as const;

/** The Gym agent server's own settings (the rest of the block is node settings or Gym's). */
export const GymAgentConfig = z.object({
  host: z.string().default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(0),
  /** The harness every rollout runs (`codex`, `claude-code`, `qwen-code`, `pi`, `mini`). */
  harness: z.enum(HARNESS_KINDS).default("mini"),
  /** The harness's AgentSpec.settings (max_turns, dialect, context_window, …). */
  harness_settings: z.record(z.string(), z.unknown()).default({}),
  /** Model name given to the harness when a row's `responses_create_params.model` is unset. */
  model: z.string().min(1),
  /** Seconds the harness may run (a task's own `metadata.agent_timeout` wins). */
  agent_timeout_seconds: z.number().positive().default(1800),
  /** Seconds one rollout may take from INIT to its result. */
  task_timeout_seconds: z.number().positive().default(3600),
  trajectory_strategy: z.enum(GYM_TRAJECTORY_STRATEGIES).default("template-aware"),
  /** template-aware only: largest context drift a call may add to the main line; null = no limit. */
  max_context_drift: z.number().int().nonnegative().nullable().default(null),
  /** Mask agent timeouts from training (Polar's default keeps them, with reward 0). */
  mask_agent_timeout: z.boolean().default(false),
  /**
   * HTTP status of an answer with no token bundle at all (an infrastructure failure before any
   * model call): 200 keeps Gym's one-row-per-rollout contract, 503 makes NeMo RL retry the prompt.
   */
  untrainable_status: z.union([z.literal(200), z.literal(503)]).default(200),
});
export type GymAgentConfig = z.infer<typeof GymAgentConfig>;

/** Everything `polar gym` needs: the agent's settings and a layer of `polar node` settings. */
export interface GymSettings {
  agent: GymAgentConfig;
  /** Merged into the node's config (engine URLs and model included); validated by NodeConfig. */
  node: Record<string, unknown>;
}

/**
 * Keys of a Gym agent block that are Gym's own (BaseRunServerInstanceConfig,
 * BaseResponsesAPIAgentConfig, the catalogue fields); any other unknown key is refused as a typo.
 */
const GYM_KEYS = new Set([
  "entrypoint",
  "domain",
  "name",
  "num_workers",
  "datasets",
  "model_server",
  "resources_server",
  "description",
  "value",
  "verified",
  "verified_url",
  "license",
  "skip_verification",
  "skip_verification_reward",
  "token_id_capture",
]);

const ServerRef = z.looseObject({ type: z.string(), name: z.string() });
const AgentBlock = z.looseObject({
  node: z.record(z.string(), z.unknown()).optional(),
  model_server: ServerRef.optional(),
});

function settingsError(where: string, issues: z.core.$ZodIssue[]): PolarError {
  const lines = issues.map(
    (i) => `${[...i.path].join(".") || "(block)"}: ${i.code === "unrecognized_keys" ? `unknown setting(s) ${i.keys.join(", ")}` : i.message}`,
  );
  return new PolarError("bad_request", `invalid Gym agent settings in ${where}:\n  ${lines.join("\n  ")}`);
}

/** `${key}` interpolations of OmegaConf (NEMO_GYM_CONFIG_DICT is written unresolved), against top-level keys. */
function resolveInterpolation(value: unknown, top: Record<string, unknown>): unknown {
  if (typeof value !== "string") return value;
  const whole = /^\$\{([A-Za-z0-9_.]+)\}$/.exec(value);
  if (whole) return top[whole[1]!];
  return value.replace(/\$\{([A-Za-z0-9_.]+)\}/g, (_, key: string) => String(top[key] ?? ""));
}

/** The engine base URL Polar's backends expect: no trailing `/v1`. */
export function engineBaseUrl(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

interface PolicyEndpoint {
  urls: string[];
  model: string | undefined;
}

/**
 * The policy endpoint: the block's `model_server` (Gym's vllm_model block names the engine in
 * `base_url` and `model`), else the top-level `policy_base_url` and `policy_model_name`.
 */
function policyEndpoint(top: Record<string, unknown>, block: z.infer<typeof AgentBlock>): PolicyEndpoint {
  let urls: unknown;
  let model: unknown;
  if (block.model_server) {
    const server = top[block.model_server.name] as Record<string, Record<string, Record<string, unknown>>> | undefined;
    const inner = server?.[block.model_server.type];
    const first = inner ? Object.values(inner)[0] : undefined;
    if (first) {
      urls = resolveInterpolation(first.base_url, top);
      model = resolveInterpolation(first.model, top);
    }
  }
  urls ??= top.policy_base_url;
  model ??= top.policy_model_name;
  const list = (Array.isArray(urls) ? urls : urls === undefined || urls === null || urls === "" ? [] : [urls]).map(String).map(engineBaseUrl);
  return { urls: list, model: typeof model === "string" && model !== "" ? model : undefined };
}

/**
 * One agent block (its own keys, `node:` and the engine) into settings; `top` is the whole Gym
 * config; `overrides` (same shape as the block, e.g. from flags) win over the block.
 */
export function settingsFromBlock(
  raw: Record<string, unknown>,
  top: Record<string, unknown>,
  where: string,
  overrides: Record<string, unknown> = {},
): GymSettings {
  const block = mergeLayers(raw, overrides);
  const parsedBlock = AgentBlock.safeParse(block);
  if (!parsedBlock.success) throw settingsError(where, parsedBlock.error.issues);
  const endpoint = policyEndpoint(top, parsedBlock.data);
  const own = Object.fromEntries(Object.entries(block).filter(([key]) => !GYM_KEYS.has(key) && key !== "node"));
  const agent = GymAgentConfig.strict().safeParse({ ...own, model: own.model ?? endpoint.model });
  if (!agent.success) throw settingsError(where, agent.error.issues);
  const nodeLayer = { ...(parsedBlock.data.node ?? {}) } as Record<string, unknown>;
  const engine = { ...((nodeLayer.engine as Record<string, unknown> | undefined) ?? {}) };
  if (endpoint.urls.length > 0 && engine.urls === undefined) engine.urls = endpoint.urls;
  if (engine.model === undefined) engine.model = agent.data.model;
  nodeLayer.engine = engine;
  return { agent: agent.data, node: nodeLayer };
}

/**
 * Settings from Gym's environment: NEMO_GYM_CONFIG_DICT (the global config as YAML) and
 * NEMO_GYM_CONFIG_PATH (the name of this server's block: `<name>: {responses_api_agents: {<agent>: {...}}}`).
 */
export function settingsFromGymEnvironment(env: Record<string, string | undefined>, overrides: Record<string, unknown> = {}): GymSettings {
  const text = env.NEMO_GYM_CONFIG_DICT;
  const path = env.NEMO_GYM_CONFIG_PATH;
  if (!text) throw new PolarError("bad_request", "NEMO_GYM_CONFIG_DICT is not set: `polar gym --gym-env` is started by Gym (python app.py)");
  if (!path) throw new PolarError("bad_request", "NEMO_GYM_CONFIG_PATH is not set: Gym names this server's block in it");
  let top: unknown;
  try {
    top = Bun.YAML.parse(text);
  } catch (err) {
    throw new PolarError("bad_request", `NEMO_GYM_CONFIG_DICT is not valid YAML: ${(err as Error).message}`);
  }
  if (typeof top !== "object" || top === null || Array.isArray(top)) throw new PolarError("bad_request", "NEMO_GYM_CONFIG_DICT is not a mapping");
  const server = (top as Record<string, unknown>)[path];
  const agents = (server as Record<string, unknown> | undefined)?.responses_api_agents;
  const block = agents && typeof agents === "object" ? Object.values(agents as Record<string, unknown>)[0] : undefined;
  if (!block || typeof block !== "object") {
    throw new PolarError("bad_request", `NEMO_GYM_CONFIG_DICT has no agent block at ${path}.responses_api_agents.<name>`);
  }
  const settings = settingsFromBlock(block as Record<string, unknown>, top as Record<string, unknown>, `NEMO_GYM_CONFIG_DICT at ${path}`, overrides);
  if ((settings.node.engine as { urls?: unknown }).urls === undefined) {
    throw new PolarError(
      "bad_request",
      `NEMO_GYM_CONFIG_DICT names no policy endpoint: set policy_base_url (NeMo RL sets it), a model_server with a base_url in ${path}, or node.engine.urls`,
    );
  }
  return settings;
}

/** Settings from a file holding one agent block (YAML, JSON or TOML) and, optionally, the top-level policy keys. */
export function settingsFromFile(path: string, overrides: Record<string, unknown> = {}): GymSettings {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new PolarError("bad_request", `config file ${path} cannot be read: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    const ext = extname(path);
    parsed = ext === ".json" ? JSON.parse(text) : ext === ".toml" ? Bun.TOML.parse(text) : Bun.YAML.parse(text);
  } catch (err) {
    throw new PolarError("bad_request", `config file ${path}: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new PolarError("bad_request", `config file ${path}: expected a mapping of settings`);
  const { policy_base_url: url, policy_model_name: model, ...block } = parsed as Record<string, unknown>;
  return settingsFromBlock(block, { policy_base_url: url, policy_model_name: model }, path, overrides);
}
