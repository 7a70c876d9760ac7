// Why: one Gym `/run` is one Polar rollout: resolve the row's task, submit it as a task of one
// sample under its own id, await the result, read the recorded calls and their traces, and answer
// the row echoed with Gym's response, the reward, the mask and Polar's detail. A Gym client that
// goes away cancels the rollout.
import { randomBytes } from "node:crypto";
import { GymRunResult, type GymRunRequest, type PolarRolloutDetail } from "../../protocol/gym.ts";
import { SessionResult } from "../../protocol/rollout.ts";
import type { ValidationDetail } from "../../lib/fastapi-errors.ts";
import type { GymAgentConfig } from "./config.ts";
import { outcomeOf } from "./outcome.ts";
import type { PolarRollouts } from "./polar-client.ts";
import { buildResponse } from "./response-builder.ts";
import type { RolloutTaskCatalog } from "./rollout-tasks.ts";
import { resolveTask } from "./task-resolution.ts";

export interface RunDeps {
  config: GymAgentConfig;
  polar: PolarRollouts;
  catalog: RolloutTaskCatalog;
  nodeId: string;
}

export type RunAnswer = { status: 200 | 503; body: GymRunResult } | { status: 422 | 409 | 500 | 503; body: { detail: ValidationDetail[] | string } };

/** Gym's identity of a rollout (nemo_gym/rollout_correlation.py maybe_rollout_id_from_run_body). */
export function gymRolloutId(row: GymRunRequest): string | null {
  let id =
    row._ng_rollout_id ?? (row._ng_task_index !== undefined && row._ng_rollout_index !== undefined ? `${row._ng_task_index}-${row._ng_rollout_index}` : null);
  if (id !== null && (row._ng_attempt_index ?? 0) > 0) id = `${id}-a${row._ng_attempt_index}`;
  return id;
}

/** The evaluation detail without its logs (they stay in the node's store). */
function evaluationSummary(evaluation: unknown): Record<string, unknown> | null {
  if (!evaluation || typeof evaluation !== "object") return null;
  const { logs: _logs, ...rest } = evaluation as Record<string, unknown>;
  return rest;
}

export async function runRow(row: GymRunRequest, deps: RunDeps, signal: AbortSignal): Promise<RunAnswer> {
  const resolved = resolveTask(row, (id) => deps.catalog.fileTask(id));
  if (!resolved.ok) return { status: 422, body: { detail: resolved.detail } };
  const { config } = deps;
  const runTaskId = `gym-${randomBytes(12).toString("hex")}`;
  const rolloutId = gymRolloutId(row);
  const model = row.responses_create_params.model ?? config.model;
  const agentTimeout = resolved.task.metadata.agent_timeout ?? config.agent_timeout_seconds;

  deps.catalog.hold(runTaskId, resolved.task);
  try {
    const submitted = await deps.polar.submit({
      task_id: runTaskId,
      instruction: resolved.instruction,
      agent: { harness: config.harness, model_name: model, settings: config.harness_settings },
      num_samples: 1,
      timeout_seconds: config.task_timeout_seconds,
      builder: { strategy: config.trajectory_strategy },
      metadata: {
        agent_timeout: agentTimeout,
        gym_rollout_id: rolloutId,
        gym_task_id: resolved.task.task_id,
        ...(row._ng_task_index !== undefined ? { gym_task_index: row._ng_task_index } : {}),
        ...(row._ng_rollout_index !== undefined ? { gym_rollout_index: row._ng_rollout_index } : {}),
      },
    });
    if (!submitted.ok) {
      const detail = (submitted.body as { detail?: ValidationDetail[] | string } | null)?.detail ?? `the node refused the rollout (${submitted.status})`;
      const status = submitted.status === 422 || submitted.status === 409 || submitted.status === 503 ? submitted.status : 500;
      return { status, body: { detail } };
    }

    let finished;
    try {
      finished = await deps.polar.finished(runTaskId, signal);
    } catch (err) {
      if (signal.aborted) await deps.polar.cancel(runTaskId).catch(() => {});
      throw err;
    }
    const result = SessionResult.parse(finished.results[0]);
    const outcome = outcomeOf(result, { maskAgentTimeout: config.mask_agent_timeout, agentTimeoutSeconds: agentTimeout });
    const sessionId = typeof result.metadata.gateway_session_id === "string" ? result.metadata.gateway_session_id : null;
    const [calls, trajectory] = sessionId
      ? await Promise.all([deps.polar.calls(sessionId), deps.polar.trajectory(sessionId, config.trajectory_strategy, config.max_context_drift)])
      : [[], null];
    const built = buildResponse(calls, trajectory, {
      id: `resp_${result.session_id}`,
      createdAt: Math.floor(Date.now() / 1000),
      model,
      params: row.responses_create_params,
      status: outcome.responseStatus,
      errorMessage: outcome.failure ? `${outcome.failure.cause}: ${outcome.failure.message}` : null,
      strategy: config.trajectory_strategy,
      maxContextDrift: config.max_context_drift,
    });
    const agent = result.metadata.agent as PolarRolloutDetail["agent"] | undefined;
    const detail: PolarRolloutDetail = {
      rollout_id: result.session_id,
      gateway_session_id: sessionId,
      polar_task_id: runTaskId,
      task_id: resolved.task.task_id,
      gym_rollout_id: rolloutId,
      harness: config.harness,
      model,
      node_id: result.node_id ?? deps.nodeId,
      status: result.status,
      reward_given: outcome.rewardGiven,
      evaluation: evaluationSummary(result.metadata.evaluation),
      agent: agent
        ? { exit_code: agent.exit_code ?? null, timed_out: agent.timed_out === true || outcome.failureKind === "agent_timeout", error: agent.error ?? null }
        : null,
      failure: outcome.failure,
      timing: result.timing,
      trajectory: sessionId ? built.trajectory : null,
    };
    const body = GymRunResult.parse({
      ...row,
      response: built.response,
      reward: outcome.reward,
      mask_sample: outcome.maskSample,
      instance_config: { mask_sample: outcome.maskSample },
      failure_kind: outcome.failureKind,
      failure_reason: outcome.failureReason,
      polar_rollout: detail,
      ...(outcome.failureClass ? { _ng_failure_class: outcome.failureClass } : {}),
      ...(outcome.noPersist ? { _ng_no_persist: true } : {}),
    });
    return { status: built.bundleCount === 0 ? config.untrainable_status : 200, body };
  } finally {
    deps.catalog.release(runTaskId);
  }
}
