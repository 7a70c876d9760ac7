// Why: the gateway's settings are read once, validated once, and their defaults live together
// here, so the CLI, tests and the node agent build a gateway from the same shape.
import { z } from "zod";
import { DEFAULT_CACHE_BYTES } from "../cache-budget.ts";

export const GatewayConfig = z.object({
  host: z.string().default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(8300),
  /** SQLite file for sessions and recorded calls. */
  db: z.string().default(".polar/gateway.db"),
  /** Guards the session and admin APIs; never valid as an LLM key. */
  adminToken: z.string().min(16, "admin token must be at least 16 characters"),
  /** Every unknown API key becomes its own session (offline data generation). */
  open: z.boolean().default(false),
  /** Base URL clients should use, when it differs from the listening address (proxies, sandboxes). */
  publicUrl: z.string().url().optional(),
  /** Model folder (tokenizer.json + tokenizer_config.json) for count_tokens; optional. */
  tokenizer: z.string().optional(),
  /** Streamed calls wait this long for the engine before committing to 200 + keep-alives. */
  streamHeadStartMs: z.number().int().nonnegative().default(3_000),
  keepAliveMs: z.number().int().positive().default(10_000),
  /** Bytes a request body may have (declared or chunked); more gets the dialect's 413. */
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  /** Object/array nesting a request body may have; deeper gets the dialect's 400 before any parsing. */
  maxJsonDepth: z.number().int().positive().default(256),
  /**
   * Bytes all per-session caches together may hold (recent calls, token-splice turns, seqs,
   * session lookup, sticky routing); the least recently used entries go first. 0 = no caching.
   */
  cacheBytes: z.number().int().nonnegative().default(DEFAULT_CACHE_BYTES),
  /** Trainer-side sampling: cap on max_tokens, forced temperature / top_p / thinking (sampling-policy.ts). */
  maxTokensCap: z.number().int().positive().optional(),
  temperature: z.number().min(0).optional(),
  topP: z.number().gt(0).max(1).optional(),
  /** Forces thinking on or off for every call (chat_template_kwargs.enable_thinking). */
  thinking: z.boolean().optional(),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;
export type GatewayConfigInput = z.input<typeof GatewayConfig>;
