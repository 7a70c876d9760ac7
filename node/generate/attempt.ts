// Why: one finished rollout becomes one attempt — its rows (both views of each trace, with
// provenance), the facts an --accept expression reads, and the ledger line — in one place, so
// the token view is present exactly when the backend returned token ids and absent otherwise.
import type { RecordedCall } from "../../protocol/calls.ts";
import type { GenerateAttempt, GeneratedTrace } from "../../protocol/generate.ts";
import type { RolloutTrace, SessionResult } from "../../protocol/rollout.ts";
import type { AcceptFacts } from "./accept.ts";
import { answered, chatTools, threadMessages, threadsByPrefix, type AnsweredCall } from "./chat-view.ts";

export interface AttemptContext {
  harness: { name: string; version: string | null };
  model: string;
  backend: string;
}

export interface BuiltAttempt {
  rows: GeneratedTrace[];
  facts: AcceptFacts;
  /** The ledger line without the acceptance decision. */
  attempt: Omit<GenerateAttempt, "outcome" | "failure_kind" | "duplicate_of">;
  /** What went wrong, as the ledger's failure kind when --accept turns it down (null: nothing; it is then `rejected`). */
  failure: string | null;
}

interface EvaluationDetailLike {
  status?: unknown;
  fail_to_pass?: { passed: number; total: number } | null;
  pass_to_pass?: { passed: number; total: number } | null;
  patch_files?: unknown;
}

function evaluationOf(result: SessionResult): GeneratedTrace["evaluation"] {
  const e = result.metadata.evaluation as EvaluationDetailLike | null | undefined;
  if (!e || typeof e.status !== "string") return null;
  return {
    status: e.status,
    fail_to_pass: e.fail_to_pass ?? null,
    pass_to_pass: e.pass_to_pass ?? null,
    patch_files: Array.isArray(e.patch_files) ? e.patch_files.filter((f): f is string => typeof f === "string") : [],
  };
}

function usageTokens(call: AnsweredCall): number | undefined {
  const n = call.response.usage.prompt_tokens + call.response.usage.completion_tokens;
  return n > 0 ? n : undefined;
}

interface Thread {
  calls: AnsweredCall[];
  trace?: RolloutTrace;
}

/** Token traces with the calls each was built from; without token ids, calls threaded by their messages. */
function threadsOf(result: SessionResult, calls: AnsweredCall[]): Thread[] {
  const traces = result.trajectory.traces;
  if (traces.length === 0) return threadsByPrefix(calls).map((t) => ({ calls: t }));
  const bySeq = new Map(calls.map((c) => [c.seq, c]));
  return traces.flatMap((trace) => {
    const seqs = Array.isArray(trace.metadata.calls) ? (trace.metadata.calls as unknown[]).filter((s): s is number => typeof s === "number") : [];
    const own = seqs.flatMap((s) => (bySeq.has(s) ? [bySeq.get(s)!] : []));
    return own.length > 0 ? [{ calls: own, trace }] : [];
  });
}

export function buildAttempt(result: SessionResult, recorded: readonly RecordedCall[], sampleIndex: number, ctx: AttemptContext, now: string): BuiltAttempt {
  const calls = answered(recorded);
  const threads = threadsOf(result, calls);
  const reward = typeof result.metadata.reward === "number" ? result.metadata.reward : null;
  const evaluation = evaluationOf(result);
  const timing = { e2e_ms: result.timing.e2e_ms, run_ms: result.timing.run_ms, eval_ms: result.timing.eval_ms };
  const rows: GeneratedTrace[] = threads.map((thread, index) => {
    const last = thread.calls[thread.calls.length - 1]!;
    const t = thread.trace;
    const tokenCount = t ? t.prompt_ids.length + t.response_ids.length : usageTokens(last);
    return {
      id: `${result.task_id}/${sampleIndex}/${index}`,
      rollout_id: result.session_id,
      task_id: result.task_id,
      sample_index: sampleIndex,
      trace_index: index,
      trace_count: threads.length,
      messages: threadMessages(thread.calls),
      tools: chatTools(last.request.tools),
      ...(t && { prompt_ids: t.prompt_ids, response_ids: t.response_ids, loss_mask: t.loss_mask, response_logprobs: t.response_logprobs }),
      ...(tokenCount !== undefined && { token_count: tokenCount }),
      finish_reason: t ? t.finish_reason : last.response.finish_reason,
      reward,
      harness: ctx.harness,
      model: ctx.model,
      backend: ctx.backend,
      evaluation,
      timing,
      calls: thread.calls.map((c) => c.seq),
      generated_at: now,
    };
  });
  const tokens = rows.length > 0 && rows.every((r) => r.token_count !== undefined) ? rows.reduce((n, r) => n + r.token_count!, 0) : undefined;
  const agent = result.metadata.agent as { exit_code?: number | null; timed_out?: boolean } | undefined;
  const timedOut = agent?.timed_out === true;
  const failureCause = (result.metadata.failure as { cause?: unknown } | undefined)?.cause;
  const failure =
    result.status !== "COMPLETED"
      ? typeof failureCause === "string"
        ? failureCause
        : result.status.toLowerCase()
      : timedOut
        ? "agent_timeout"
        : reward === null
          ? "no_reward"
          : null;
  const facts: AcceptFacts = {
    reward,
    status: result.status,
    task_id: result.task_id,
    sample_index: sampleIndex,
    harness: ctx.harness.name,
    turns: calls.length,
    traces: rows.length,
    tokens: tokens ?? null,
    exit_code: agent?.exit_code ?? null,
    agent_timed_out: timedOut,
    duration_s: result.timing.e2e_ms / 1000,
    "evaluation.status": evaluation?.status ?? null,
    "fail_to_pass.passed": evaluation?.fail_to_pass?.passed ?? null,
    "fail_to_pass.total": evaluation?.fail_to_pass?.total ?? null,
    "pass_to_pass.passed": evaluation?.pass_to_pass?.passed ?? null,
    "pass_to_pass.total": evaluation?.pass_to_pass?.total ?? null,
  };
  const engineTokens = calls.reduce(
    (sum, c) => ({ prompt: sum.prompt + c.response.usage.prompt_tokens, completion: sum.completion + c.response.usage.completion_tokens }),
    { prompt: 0, completion: 0 },
  );
  return {
    rows,
    facts,
    failure,
    attempt: {
      task_id: result.task_id,
      sample_index: sampleIndex,
      rollout_id: result.session_id,
      status: result.status,
      reward,
      rows: rows.length,
      ...(tokens !== undefined && { tokens }),
      engine_tokens: engineTokens,
      duration_ms: result.timing.e2e_ms,
      finished_at: now,
    },
  };
}

/** What dedup compares: the assistant turns of every row (text, reasoning, tool calls). */
export function assistantText(rows: readonly GeneratedTrace[]): string {
  return rows
    .flatMap((r) => r.messages.filter((m) => m.role === "assistant"))
    .map((m) => [m.reasoning_content ?? "", m.content, ...(m.tool_calls ?? []).map((c) => `${c.function.name} ${c.function.arguments}`)].join("\n"))
    .join("\n");
}
