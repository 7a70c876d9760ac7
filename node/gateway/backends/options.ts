// Why: every backend is configured by the same validated options object (engine URLs, timeouts,
// retries), read once at start-up; kind-specific knobs live beside the shared ones so one config
// block can switch backends without restructuring.
import { z } from "zod";

export const BACKEND_KINDS = ["vllm", "sglang", "tito", "openai", "anthropic"] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** Engines a tito backend can send token ids to. */
export const TITO_ENGINES = ["vllm", "sglang"] as const;
export type TitoEngine = (typeof TITO_ENGINES)[number];
/** How the sglang backend talks to SGLang: its OpenAI chat endpoint or native `/generate`. */
export const SGLANG_MODES = ["chat", "generate"] as const;

export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_RETRIES = 2;
export const DEFAULT_BACKOFF_MS = 250;
export const DEFAULT_ENGINE_DOWN_MS = 10_000;
export const DEFAULT_MAX_SESSIONS = 10_000;

export const BackendOptions = z.object({
  /** Engine base URLs (no trailing `/v1`). For sglang with `router: true`, the router's URL. */
  urls: z.array(z.string().url()).min(1),
  /** Served model name sent to the engine; the client's model name is used when absent. */
  model: z.string().optional(),
  /** Whole-call deadline (all attempts and backoff included). */
  timeoutMs: z.number().int().positive().default(DEFAULT_TIMEOUT_MS),
  /** Extra attempts after the first on connect errors and 5xx. */
  retries: z.number().int().nonnegative().default(DEFAULT_RETRIES),
  /** First backoff; doubles on each further attempt. */
  backoffMs: z.number().int().nonnegative().default(DEFAULT_BACKOFF_MS),
  /** How long an engine that refused a connection is skipped by routing. */
  engineDownMs: z.number().int().nonnegative().default(DEFAULT_ENGINE_DOWN_MS),
  /** Sessions remembered for sticky routing / token splice (least recently used dropped first). */
  maxSessions: z.number().int().positive().default(DEFAULT_MAX_SESSIONS),
  /** Bearer token sent to the engine (vLLM `--api-key`, hosted OpenAI-compatible APIs); `x-api-key` for anthropic. */
  apiKey: z.string().optional(),
  /** openai: pass assistant reasoning back as `reasoning_content` (most hosted APIs reject it). */
  passReasoning: z.boolean().default(false),
  /** sglang: OpenAI chat endpoint (server renders the template) or native `/generate`. */
  sglangMode: z.enum(SGLANG_MODES).default("chat"),
  /** sglang: `urls` are sglang-router URLs; list their workers and call the workers directly. */
  router: z.boolean().default(false),
  /** tito: engine API that receives token ids. */
  titoEngine: z.enum(TITO_ENGINES).default("vllm"),
  /** tito: reuse the exact sampled ids of earlier assistant turns in the prompt. */
  tokenSplice: z.boolean().default(false),
  /** tito: tokenizer / chat template to load (node/tokenizer loader argument). */
  tokenizer: z.string().optional(),
});
export type BackendOptions = z.infer<typeof BackendOptions>;
export type BackendOptionsInput = z.input<typeof BackendOptions>;
