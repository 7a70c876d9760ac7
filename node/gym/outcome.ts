// Why: what a Polar result means to Gym and NeMo RL — the reward, whether the sample is masked,
// which name from Gym's shared failure vocabulary (nemo_gym/failure_kinds.py) or `polar:<cause>`
// it gets, and how Gym's collector files it — decided in one place from Polar's SessionResult.
import { z } from "zod";
import type { GymFailureKind, GymResponse } from "../../protocol/gym.ts";
import type { SessionResult } from "../../protocol/rollout.ts";

export interface GymOutcome {
  reward: number;
  maskSample: boolean;
  failureKind: GymFailureKind | null;
  failureReason: string | null;
  /** Infrastructure failures: Gym's collector writes them to its failures file and retries them on resume. */
  failureClass: GymFailureKind | null;
  /** The node stopped mid-rollout: Gym re-dispatches it and stores nothing (its "kill-shaped" failures). */
  noPersist: boolean;
  responseStatus: GymResponse["status"];
  /** Polar's cause and message, when the rollout failed. */
  failure: { cause: string; message: string } | null;
  rewardGiven: boolean;
}

/** Polar failure causes (node/pipeline/result.ts) with a name in Gym's vocabulary. */
const GYM_NAMES: Record<string, GymFailureKind> = {
  sandbox_start: "provider_unavailable",
  harness_start: "agent_run_error",
  evaluator: "verifier_error",
  cancelled: "cancelled",
  shutdown: "shutdown",
};

/** Causes after which the rollout should simply be run again, with nothing stored. */
const KILL_SHAPED = new Set(["shutdown", "node_restarted"]);

const Failure = z.looseObject({ cause: z.string(), message: z.string() });
const AgentFacts = z.looseObject({ timed_out: z.boolean().optional() });

/** Gym's name for a Polar failure cause: its own where one fits, else `polar:<cause>`. */
export function failureKindOf(cause: string): GymFailureKind {
  const known = GYM_NAMES[cause];
  if (known) return known;
  const slug =
    cause
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, "_")
      .replace(/^[^a-z]+/, "") || "internal";
  return `polar:${slug}`;
}

function failureOf(result: SessionResult): { cause: string; message: string } {
  const named = Failure.safeParse(result.trajectory.metadata.failure ?? result.metadata.failure);
  if (named.success) return { cause: named.data.cause, message: named.data.message };
  const text = result.error ?? result.trajectory.error ?? "unknown failure";
  const colon = text.indexOf(": ");
  return colon > 0 ? { cause: text.slice(0, colon), message: text.slice(colon + 2) } : { cause: "internal", message: text };
}

export function outcomeOf(result: SessionResult, options: { maskAgentTimeout: boolean; agentTimeoutSeconds: number | undefined }): GymOutcome {
  const evaluation = (result.metadata.evaluation ?? null) as Record<string, unknown> | null;
  const rewardGiven = evaluation !== null && evaluation.reward_given !== false && typeof result.metadata.reward === "number";
  if (result.status !== "COMPLETED") {
    const failure = failureOf(result);
    const kind = failureKindOf(failure.cause);
    return {
      reward: 0,
      maskSample: true,
      failureKind: kind,
      failureReason: failure.message,
      failureClass: kind,
      noPersist: KILL_SHAPED.has(failure.cause),
      responseStatus: "failed",
      failure,
      rewardGiven: false,
    };
  }
  const agent = AgentFacts.safeParse(result.metadata.agent);
  const agentTimedOut =
    (result.trajectory.metadata.training_filter as { reason?: unknown } | undefined)?.reason === "agent_timeout" ||
    (agent.success && agent.data.timed_out === true);
  if (agentTimedOut) {
    const limit = options.agentTimeoutSeconds === undefined ? "" : ` of ${options.agentTimeoutSeconds} s`;
    return {
      reward: typeof result.metadata.reward === "number" ? result.metadata.reward : 0,
      maskSample: options.maskAgentTimeout,
      failureKind: "agent_timeout",
      failureReason: `the harness ran past its agent timeout${limit}`,
      failureClass: null,
      noPersist: false,
      responseStatus: "incomplete",
      failure: null,
      rewardGiven: false,
    };
  }
  if (!rewardGiven) {
    const reason = typeof evaluation?.reason === "string" ? evaluation.reason : "the evaluator gave no reward";
    return {
      reward: 0,
      maskSample: true,
      failureKind: "verifier_error",
      failureReason: reason,
      failureClass: "verifier_error",
      noPersist: false,
      responseStatus: "failed",
      failure: null,
      rewardGiven: false,
    };
  }
  return {
    reward: result.metadata.reward as number,
    maskSample: false,
    failureKind: null,
    failureReason: null,
    failureClass: null,
    noPersist: false,
    responseStatus: "completed",
    failure: null,
    rewardGiven: true,
  };
}
