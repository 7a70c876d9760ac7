// Why: the coordinator's settings are read once, validated once, and their defaults live
// together here; the CLI and tests build a coordinator from the same shape.
import { z } from "zod";
import { isLoopbackHost } from "../lib/rollout-api/access.ts";

const Token = (who: string) => z.string().min(16, `${who} token must be at least 16 characters`);

export const STALE_ACTIONS = ["cancel", "flag"] as const;

export const CoordinatorConfig = z
  .object({
    host: z.string().default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(8500),
    /** SQLite file or `:memory:` (bun:sqlite), or a `libsql://` / `http(s)://` / `ws(s)://` libSQL server URL. */
    db: z.string().default(".polar/coordinator.db"),
    dbAuthToken: z.string().optional(),
    nodeToken: Token("node"),
    trainerToken: Token("trainer"),
    adminToken: Token("admin"),
    /** Guards the rollout API (`/rollout/*`); required unless `openRolloutApi`. The admin token opens it too. */
    rolloutToken: Token("rollout").optional(),
    /** Serve the rollout API without a token (`--open`); refused unless `host` is loopback. */
    openRolloutApi: z.boolean().default(false),
    /** /metrics answers only with the admin token (open by default, for Prometheus on the same host). */
    metricsRequireAdminToken: z.boolean().default(false),
    /** Heartbeat interval asked of nodes; a node silent for `missedHeartbeats` intervals is dropped. */
    heartbeatMs: z.number().int().positive().default(5_000),
    missedHeartbeats: z.number().int().min(1).default(3),
    /** A disconnected node's rollouts wait this long for it to come back before being reassigned. */
    nodeGraceMs: z.number().int().nonnegative().default(10_000),
    /** Assignments of one rollout before it fails for good (node losses). */
    maxAttempts: z.number().int().min(1).default(3),
    /** Policy versions a rollout may lag behind before it is cancelled (and requeued) or flagged; unset = no limit. */
    maxStaleness: z.number().int().nonnegative().optional(),
    staleAction: z.enum(STALE_ACTIONS).default("flag"),
    /** How far one move may take the policy version (a trainer's `policy`/`resume`, the admin resume): a bad or hostile value cannot lock the others out. */
    maxPolicyStep: z.number().int().positive().default(1000),
    /** Acknowledged results are kept this long, then pruned. */
    retentionMs: z
      .number()
      .int()
      .nonnegative()
      .default(24 * 3600_000),
    pruneEveryMs: z.number().int().positive().default(60_000),
    /** Bytes of a WebSocket frame from a node (results carry traces) and from a trainer. */
    maxNodeFrameBytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
    maxTrainerFrameBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024),
    /** Bad frames a peer may send before it is disconnected. */
    maxBadFrames: z.number().int().min(1).default(10),
    /** Fresh results kept in memory for streaming without a store read. */
    resultCacheBytes: z
      .number()
      .int()
      .nonnegative()
      .default(64 * 1024 * 1024),
    /** JSONL task file trainers and rollout API requests may name tasks from. */
    tasks: z.string().optional(),
    /** Half-life, in completed groups of a task, of its pass-rate estimate (coordinator/task-stats.ts). */
    passRateHalfLifeGroups: z.number().positive().max(1_000_000).default(4),
    /** Also POST a rollout-API task's TaskResult to its callback_url when it was cancelled (Polar posts nothing then). */
    callbackOnCancel: z.boolean().default(false),
  })
  .refine(
    (c) => {
      const tokens = [c.nodeToken, c.trainerToken, c.adminToken, ...(c.rolloutToken ? [c.rolloutToken] : [])];
      return new Set(tokens).size === tokens.length;
    },
    { message: "node, trainer, admin and rollout tokens must differ", path: ["adminToken"] },
  )
  .refine((c) => c.openRolloutApi || c.rolloutToken, {
    message: "a rollout token is required (POLAR_ROLLOUT_TOKEN or --rollout-token), unless the rollout API is open (--open) on a loopback host",
    path: ["rolloutToken"],
  })
  .refine((c) => !c.openRolloutApi || isLoopbackHost(c.host), { message: "an open rollout API needs a loopback host", path: ["openRolloutApi"] });
export type CoordinatorConfig = z.infer<typeof CoordinatorConfig>;
export type CoordinatorConfigInput = z.input<typeof CoordinatorConfig>;
