// Why: `polar node`'s settings are read once — config file (JSON or TOML), then environment,
// then flags — validated once with messages that name the key, and their defaults live here.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { extname } from "node:path";
import { z } from "zod";
import { RuntimeBackend } from "../protocol/runtime.ts";
import { BACKEND_KINDS, SGLANG_MODES, TITO_ENGINES } from "./gateway/backends/options.ts";
import { isLoopbackHost } from "../lib/rollout-api/access.ts";
import { PolarError } from "../protocol/errors.ts";
import { DEFAULT_SANDBOX_LIMITS } from "./runtime/sandbox-limits.ts";
import { DEFAULT_RUNTIME } from "./runtime/registry.ts";

const positiveInt = z.number().int().positive();

export const NodeConfig = z
  .object({
    /** Labels this node's sandboxes; must stay the same across restarts to find leftovers. */
    node_id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "letters, digits, '.', '_' and '-' only")
      .default(`node-${hostname()}`),
    host: z.string().default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(8400),
    /** SQLite file: gateway sessions and calls, rollouts, events and results. */
    db: z.string().default(".polar/node.db"),
    /** Guards the session and admin APIs (and opens the rollout API too). */
    admin_token: z.string().min(16, "must be at least 16 characters"),
    /** Guards the rollout API (`/rollout/*`, `/tasks`; env POLAR_ROLLOUT_TOKEN); required unless `open_rollout_api`. */
    rollout_token: z.string().min(16, "must be at least 16 characters").optional(),
    /** Serve the rollout API without a token (`--open`); refused unless `host` is loopback. */
    open_rollout_api: z.boolean().default(false),
    /** /metrics answers only with the admin token (it is open by default, for Prometheus on the same host). */
    metrics_require_admin_token: z.boolean().default(false),
    /** Base URL harnesses on the host (or with network: host) reach the gateway at. */
    public_url: z.string().url().optional(),
    runtime: RuntimeBackend.default(DEFAULT_RUNTIME),
    /** Image used when a request's runtime names none (the process runtime ignores images). */
    default_image: z.string().optional(),
    engine: z
      .object({
        backend: z.enum(BACKEND_KINDS).default("vllm"),
        urls: z.array(z.string().url()).min(1).default(["http://127.0.0.1:8000"]),
        /** Model name given to harnesses when a request's agent names none. */
        model: z.string().default("Qwen/Qwen3-8B"),
        tokenizer: z.string().optional(),
        /** Key sent to the engine (hosted teacher APIs); never read from a file by `polar generate` (env POLAR_ENGINE_API_KEY). */
        api_key: z.string().optional(),
        // The backend's knobs (`polar gateway`'s flags); absent ones take the backend's defaults (gateway/backends/options.ts).
        /** Served model name sent to the engine (`polar gateway --model`); default: the harness's model name. */
        served_model: z.string().optional(),
        /** Whole-call engine deadline, all attempts and backoff included. */
        timeout_ms: positiveInt.optional(),
        /** Extra engine attempts after the first on connect errors and 5xx. */
        retries: z.number().int().nonnegative().optional(),
        /** First retry backoff; doubles on each further attempt. */
        backoff_ms: z.number().int().nonnegative().optional(),
        /** How long an engine that refused a connection is skipped by routing. */
        engine_down_ms: z.number().int().nonnegative().optional(),
        /** Sessions remembered for sticky routing / token splice. */
        max_sessions: positiveInt.optional(),
        /** openai: pass assistant reasoning back as `reasoning_content`. */
        pass_reasoning: z.boolean().optional(),
        /** tito: reuse earlier turns' sampled ids in the prompt. */
        token_splice: z.boolean().optional(),
        /** tito: engine API that receives token ids. */
        tito_engine: z.enum(TITO_ENGINES).optional(),
        /** sglang: OpenAI chat endpoint or native `/generate` with token ids. */
        sglang_mode: z.enum(SGLANG_MODES).optional(),
        /** sglang: `urls` are sglang-router URLs; call their workers directly. */
        sglang_router: z.boolean().optional(),
      })
      .strict()
      .default({ backend: "vllm", urls: ["http://127.0.0.1:8000"], model: "Qwen/Qwen3-8B" }),
    /** Trainer-side sampling policy applied by the gateway to every call. */
    sampling: z
      .object({
        max_tokens_cap: positiveInt.optional(),
        temperature: z.number().min(0).optional(),
        top_p: z.number().gt(0).max(1).optional(),
        /** Force thinking on or off for every call. */
        thinking: z.boolean().optional(),
      })
      .strict()
      .default({}),
    /** The gateway's own knobs (`polar gateway`'s flags); absent ones take the gateway's defaults (gateway/config.ts). */
    gateway: z
      .object({
        /** Bytes all per-session caches together may hold (least recently used go first; 0 = no caching). */
        cache_bytes: z.number().int().nonnegative().optional(),
        /** Streamed calls wait this long for the engine before committing to 200 + keep-alives. */
        stream_head_start_ms: z.number().int().nonnegative().optional(),
        keep_alive_ms: positiveInt.optional(),
        /** Bytes a request body may have. */
        max_body_bytes: positiveInt.optional(),
        /** Object/array nesting a request body may have. */
        max_json_depth: positiveInt.optional(),
      })
      .strict()
      .default({}),
    workers: z
      .object({
        init: positiveInt.default(4),
        run: positiveInt.default(8),
        postrun: positiveInt.default(4),
        /** Prepared rollouts allowed to wait for a run slot (prewarming depth). */
        ready_backlog: z.number().int().nonnegative().default(4),
      })
      .strict()
      .default({ init: 4, run: 8, postrun: 4, ready_backlog: 4 }),
    pool: z
      .object({ max_ready_per_key: positiveInt.default(8), max_concurrent_starts: positiveInt.default(2) })
      .strict()
      .default({ max_ready_per_key: 8, max_concurrent_starts: 2 }),
    /** Task file whose task ids a request may name; the bundled set by default. */
    tasks: z.string().optional(),
    /** Join a cluster: the coordinator's URL and the node token it expects (env POLAR_NODE_TOKEN). */
    coordinator: z
      .object({ url: z.string().url(), token: z.string().min(16, "must be at least 16 characters") })
      .strict()
      .optional(),
    callback: z
      .object({
        attempts: positiveInt.default(6),
        base_delay_ms: positiveInt.default(500),
        /** Also POST the TaskResult of a cancelled task (Polar posts nothing for those). */
        on_cancel: z.boolean().default(false),
      })
      .strict()
      .default({ attempts: 6, base_delay_ms: 500, on_cancel: false }),
    /** Finished rollout-API tasks stay readable (GET /rollout/task/{id}) this long, restarts included, then are pruned. */
    task_retention_hours: z.number().positive().default(24),
    /** What a request may ask of its sandbox and how much a sandbox may take (docs/security.md). */
    sandbox: z
      .object({
        /** Host folders whose files upload sources may name (after symlinks); default: the task file's folder. */
        host_path_roots: z.array(z.string().min(1)).optional(),
        /** Let requests ask for `network: "host"` (the sandbox then reaches the node's API and engines). */
        allow_host_network: z.boolean().default(false),
        /** Capabilities requests may keep with `cap_add` ("ALL": any). */
        allow_cap_add: z.array(z.string().regex(/^[A-Za-z_]+$/, "a capability name such as NET_BIND_SERVICE")).default([]),
        /** Processes per sandbox; a request's pids_limit may only lower it. */
        pids_limit: positiveInt.default(DEFAULT_SANDBOX_LIMITS.pids),
        /** Writable space per sandbox in MiB (process runtime: a tmpfs when the node runs as root; docker: where its storage allows). */
        disk_mb: positiveInt.default(DEFAULT_SANDBOX_LIMITS.diskMb),
      })
      .strict()
      .default({ allow_host_network: false, allow_cap_add: [], pids_limit: DEFAULT_SANDBOX_LIMITS.pids, disk_mb: DEFAULT_SANDBOX_LIMITS.diskMb }),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.open_rollout_api && !isLoopbackHost(c.host))
      ctx.addIssue({ code: "custom", path: ["open_rollout_api"], message: `an open rollout API needs a loopback host, not ${c.host}` });
    if (!c.open_rollout_api && !c.rollout_token)
      ctx.addIssue({
        code: "custom",
        path: ["rollout_token"],
        message: "required (POLAR_ROLLOUT_TOKEN or --rollout-token), unless open_rollout_api (--open) on a loopback host",
      });
    if (c.rollout_token && c.rollout_token === c.admin_token)
      ctx.addIssue({ code: "custom", path: ["rollout_token"], message: "must differ from admin_token" });
    if (c.rollout_token && c.coordinator && c.rollout_token === c.coordinator.token)
      ctx.addIssue({ code: "custom", path: ["rollout_token"], message: "must differ from the node token (coordinator.token)" });
  });
export type NodeConfig = z.infer<typeof NodeConfig>;
export type NodeConfigInput = z.input<typeof NodeConfig>;

/** Reads a JSON or TOML config file (by extension; TOML through Bun's parser). */
export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new PolarError("bad_request", `config file ${path} cannot be read: ${(err as Error).message}`);
  }
  try {
    const parsed: unknown = extname(path) === ".toml" ? Bun.TOML.parse(text) : JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("expected a table of settings");
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new PolarError("bad_request", `config file ${path}: ${(err as Error).message}`);
  }
}

/** Deep-merges setting layers (later wins; undefined never overrides). */
export function mergeLayers(...layers: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      const before = out[key];
      out[key] =
        before && typeof before === "object" && !Array.isArray(before) && value && typeof value === "object" && !Array.isArray(value)
          ? mergeLayers(before as Record<string, unknown>, value as Record<string, unknown>)
          : value;
    }
  }
  return out;
}

/** Validates merged settings; every problem is reported with its key (e.g. `workers.run`). */
export function parseNodeConfig(input: Record<string, unknown>): NodeConfig {
  const parsed = NodeConfig.safeParse(input);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const key = issue.path.join(".") || "(config)";
    if (issue.code === "unrecognized_keys") return `${[...issue.path, ...issue.keys].join(".")}: unknown setting`;
    return `${key}: ${issue.message}`;
  });
  throw new PolarError("bad_request", `invalid node settings:\n  ${lines.join("\n  ")}`);
}

/** Settings from the environment: POLAR_ADMIN_TOKEN, POLAR_ROLLOUT_TOKEN, POLAR_NODE_ID, POLAR_NODE_DB, POLAR_COORDINATOR_URL + POLAR_NODE_TOKEN. */
export function envLayer(env: Record<string, string | undefined>): Record<string, unknown> {
  return {
    admin_token: env.POLAR_ADMIN_TOKEN,
    rollout_token: env.POLAR_ROLLOUT_TOKEN,
    node_id: env.POLAR_NODE_ID,
    db: env.POLAR_NODE_DB,
    ...(env.POLAR_COORDINATOR_URL || env.POLAR_NODE_TOKEN ? { coordinator: { url: env.POLAR_COORDINATOR_URL, token: env.POLAR_NODE_TOKEN } } : {}),
  };
}
