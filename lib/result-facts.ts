// Why: the node's and the coordinator's metrics, event feeds and dashboards describe a finished
// rollout the same way — why it failed (the closed kinds below), how many tokens it produced and
// how faithfully its trajectory was captured — read once here from a SessionResult as it arrives
// (untrusted: every field is checked, anything absent stays absent).

/** What a rollout's failure is attributed to ("none": it ran and was scored, whatever the reward). */
export const FAILURE_KINDS = ["none", "infrastructure", "agent", "evaluation", "capture", "cancelled"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** Failure causes (node/pipeline/result.ts FAILURE_CAUSES) by kind; task_timeout goes by the stage it hit. */
const CAUSE_KIND: Record<string, FailureKind> = {
  sandbox_start: "infrastructure",
  prepare: "infrastructure",
  gateway_session: "infrastructure",
  harness_start: "infrastructure",
  engine_unreachable: "infrastructure",
  node_restarted: "infrastructure",
  shutdown: "infrastructure",
  store: "infrastructure",
  internal: "infrastructure",
  evaluator: "evaluation",
  trajectory_build: "capture",
  cancelled: "cancelled",
  early_stop: "cancelled",
};

export interface ResultFacts {
  status: string;
  failure_kind: FailureKind;
  /** The failure cause the node named (absent when none was). */
  cause: string | null;
  /** The measured reward; null when the result is masked or carries none. */
  reward: number | null;
  masked: boolean;
  tokens: { prompt: number; response: number; trainable: number };
  /** Split counts and normalisations of the rebuilt trajectory (trajectory_stats), by cause. */
  splits: Record<string, number>;
  normalisations: Record<string, number>;
  context_drift_tokens: number;
  /** Trainable tokens whose id and logprob are not the ones the engine sampled. */
  unfaithful_tokens: number;
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const len = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

function counts(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(obj(v))) if (typeof n === "number" && n > 0) out[k] = n;
  return out;
}

export function resultFacts(result: unknown): ResultFacts {
  const r = obj(result);
  const status = typeof r.status === "string" ? r.status : "ERROR";
  const trajectory = obj(r.trajectory);
  const tmeta = obj(trajectory.metadata);
  const meta = obj(r.metadata);
  const filter = obj(tmeta.training_filter);
  const masked = filter.masked === true;
  const failure = obj(tmeta.failure);
  const metaFailure = obj(meta.failure);
  const cause = typeof failure.cause === "string" ? failure.cause : typeof metaFailure.cause === "string" ? metaFailure.cause : null;
  const traces = Array.isArray(trajectory.traces) ? trajectory.traces.map(obj) : [];
  const tokens = { prompt: 0, response: 0, trainable: 0 };
  for (const t of traces) {
    tokens.prompt += len(t.prompt_ids);
    tokens.response += len(t.response_ids);
    if (Array.isArray(t.loss_mask)) for (const m of t.loss_mask) if (m === 1) tokens.trainable++;
  }
  let reward: number | null = null;
  if (!masked) for (const t of traces) if ((reward = num(t.reward)) !== null) break;
  if (!masked && reward === null) reward = num(meta.reward);
  const stats = obj(tmeta.trajectory_stats);
  const trainable = num(stats.trainable_tokens) ?? 0;
  const exact = num(stats.trainable_exactly_sampled) ?? trainable;
  const agent = obj(meta.agent);
  return {
    status,
    failure_kind: failureKind(status, cause, failure.state, agent, stats),
    cause,
    reward,
    masked,
    tokens,
    splits: counts(stats.split_counts),
    normalisations: counts(stats.normalisations),
    context_drift_tokens: num(stats.context_drift_tokens) ?? 0,
    unfaithful_tokens: Math.max(0, trainable - exact),
  };
}

function failureKind(
  status: string,
  cause: string | null,
  stateAtFailure: unknown,
  agent: Record<string, unknown>,
  stats: Record<string, unknown>,
): FailureKind {
  if (status === "CANCELLED") return "cancelled";
  if (status !== "COMPLETED") {
    if (cause === "task_timeout" || (cause === null && status === "TIMEOUT"))
      return stateAtFailure === "RUN" ? "agent" : stateAtFailure === "POSTRUN" ? "evaluation" : "infrastructure";
    return (cause !== null ? CAUSE_KIND[cause] : undefined) ?? "infrastructure";
  }
  // Ran to the end: the agent may still have failed (timed out, crashed), or its tokens may not be the engine's.
  if (agent.timed_out === true || (typeof agent.error === "string" && agent.error !== "")) return "agent";
  const calls = num(stats.call_count) ?? 0;
  const trainable = num(stats.trainable_tokens);
  const exact = num(stats.trainable_exactly_sampled);
  if ((calls > 0 && num(stats.trace_count) === 0) || (trainable !== null && exact !== null && exact < trainable)) return "capture";
  return "none";
}
