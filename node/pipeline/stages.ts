// Why: the work of each pipeline stage on one rollout — INIT (sandbox + prepare), RUN (gateway
// session + harness under the agent timeout), POSTRUN (evaluate in a fresh sandbox ‖ rebuild the
// trajectory) — kept apart from the scheduling that decides when a stage may start.
import type { RuntimeSpec } from "../../protocol/runtime.ts";
import type { SandboxPool } from "../runtime/types.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import { untilAborted } from "./abortable.ts";
import type { Evaluation, EvaluabilityCheck, GatewaySessions, HarnessRunOutcome, HarnessRunner, RolloutEvaluator, SandboxPreparer } from "./ports.ts";
import { RolloutFailure, named, type ScoredOutcome } from "./result.ts";
import type { Rollout } from "./rollout.ts";

export interface StageDeps {
  store: RolloutsRepo;
  pool: SandboxPool;
  preparer: SandboxPreparer;
  gateway: GatewaySessions;
  runner: HarnessRunner;
  evaluator: RolloutEvaluator;
  /** A task that cannot be evaluated here fails at INIT, with the cause, instead of running. */
  evaluability?: EvaluabilityCheck;
}

const since = (t0: number) => performance.now() - t0;

/** INIT: the task's evaluation requirements, a warm sandbox for its image, then its prepare actions. */
export async function initStage(r: Rollout, spec: RuntimeSpec, deps: StageDeps): Promise<void> {
  const signal = r.abort.signal;
  const unevaluable = await named("evaluator", async () => (await deps.evaluability?.check(r.request, signal)) ?? null);
  if (unevaluable) throw new RolloutFailure("evaluation_invalid", unevaluable.message, unevaluable.detail);
  let t0 = performance.now();
  r.sandbox = await named("sandbox_start", () => deps.pool.take(spec, { rollout_id: r.id }, signal));
  r.timing.container_start_ms = since(t0);
  t0 = performance.now();
  await named("prepare", () => deps.preparer.prepare(r.sandbox!, spec.prepare, signal));
  r.timing.prepare_ms = since(t0);
}

/** RUN: one gateway session, the harness in the sandbox, until it exits or the agent timeout. */
export async function runStage(r: Rollout, deps: StageDeps, taskDeadline: number): Promise<void> {
  const signal = r.abort.signal;
  let t0 = performance.now();
  const metadata = { rollout_id: r.id, task_id: r.taskId, ...r.request.metadata };
  r.session = await named("gateway_session", () => untilAborted(deps.gateway.open({ rolloutId: r.id, sandbox: r.sandbox!, metadata }), signal));
  await deps.store.setGatewaySession(r.id, r.session.id);
  r.timing.agent_setup_ms = since(t0);

  const agentTimeoutSeconds = r.request.metadata.agent_timeout;
  const agentTimeoutMs = agentTimeoutSeconds !== undefined ? agentTimeoutSeconds * 1000 : undefined;
  const remainingMs = Math.max(1, taskDeadline - performance.now());
  const agentAbort = new AbortController();
  const agentTimer = agentTimeoutMs !== undefined ? setTimeout(() => agentAbort.abort(new Error("agent timeout")), agentTimeoutMs) : undefined;
  t0 = performance.now();
  try {
    r.outcome = await named("harness_start", () =>
      runHarness(r, deps, AbortSignal.any([signal, agentAbort.signal]), Math.min(agentTimeoutMs ?? remainingMs, remainingMs)),
    );
  } finally {
    clearTimeout(agentTimer);
    r.timing.agent_exec_ms = since(t0);
  }
  if (signal.aborted) throw signal.reason;
  // No more calls are attributed to this rollout once its harness is gone.
  await named("gateway_session", () => deps.gateway.close(r.session!.id));
  if (r.outcome.timed_out || agentAbort.signal.aborted) {
    if (agentTimeoutMs === undefined || performance.now() >= taskDeadline) throw new RolloutFailure("task_timeout", "the task timeout ended the harness");
    r.agentTimedOut = true;
  }
  const failures = await named("gateway_session", () => deps.gateway.engineFailures(r.session!.id));
  if (failures > 0) throw new RolloutFailure("engine_unreachable", `${failures} LLM call(s) of the harness found no engine`);
}

/** The harness run; a runner that throws because the agent timeout killed it still gave the agent's outcome. */
async function runHarness(r: Rollout, deps: StageDeps, signal: AbortSignal, timeoutMs: number): Promise<HarnessRunOutcome> {
  const t0 = performance.now();
  try {
    return await deps.runner.run({
      sandbox: r.sandbox!,
      harness: r.harness,
      agent: r.request.agent,
      instruction: r.request.instruction,
      session: r.session!,
      timeoutMs,
      signal,
    });
  } catch (err) {
    if (signal.aborted && !r.abort.signal.aborted)
      return { exit_code: null, timed_out: true, final_output: "", error: "killed at the agent timeout", duration_ms: performance.now() - t0 };
    throw err;
  }
}

/** POSTRUN: evaluation (the evaluator takes its own fresh sandbox) while the trajectory is rebuilt. */
export async function postrunStage(r: Rollout, deps: StageDeps): Promise<ScoredOutcome> {
  const signal = r.abort.signal;
  const evaluation = async (): Promise<Evaluation> => {
    // An agent timeout is the agent's outcome: reward 0, nothing to score.
    if (r.agentTimedOut) return { reward: 0, detail: { skipped: "agent_timeout" } };
    const t0 = performance.now();
    const ev = await named("evaluator", () =>
      deps.evaluator.evaluate({ rolloutId: r.id, request: r.request, agentSandbox: r.sandbox!, harness: r.outcome!, signal }),
    );
    r.timing.eval_ms = since(t0);
    if (!Number.isFinite(ev.reward)) throw new RolloutFailure("evaluator", `the evaluator returned reward ${ev.reward}`);
    return ev;
  };
  const build = async () => {
    const t0 = performance.now();
    r.trajectory = await named("trajectory_build", () => untilAborted(deps.gateway.trajectory(r.session!.id, r.strategy), signal));
    r.timing.build_ms = since(t0);
    return r.trajectory;
  };
  const [ev, trajectory] = await Promise.allSettled([evaluation(), build()]);
  if (signal.aborted) throw signal.reason;
  if (ev.status === "rejected") throw ev.reason;
  if (trajectory.status === "rejected") throw trajectory.reason;
  return { trajectory: trajectory.value, reward: ev.value.reward, evaluation: ev.value.detail };
}
