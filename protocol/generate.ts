// Why: `polar generate` writes what SFT and RL trainers read offline — one row per accepted
// trace with the chat view (OpenAI Chat Completions `messages` + `tools`, as TRL, axolotl and
// LLaMA-Factory read them) and, where the backend returned them, the token view — plus a ledger
// of every attempt, which makes a run resumable, and the run's summary; each shape is defined
// once here.
import { z } from "zod";
import { SessionResultStatus } from "./rollout.ts";

/** A tool call in OpenAI's chat format (arguments as the JSON text the model wrote). */
export const ChatToolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** One message in OpenAI's chat format; assistant reasoning in `reasoning_content`, the field Hugging Face chat templates (Qwen3, DeepSeek-R1) read. */
export const ChatMessage = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
  reasoning_content: z.string().optional(),
  tool_calls: z.array(ChatToolCall).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A tool offered to the model, in OpenAI's chat format. */
export const ChatTool = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string(), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()) }),
});
export type ChatTool = z.infer<typeof ChatTool>;

/** What the evaluator said, in short. */
export const EvaluationSummary = z.object({
  status: z.string(),
  fail_to_pass: z.object({ passed: z.number().int(), total: z.number().int() }).nullable(),
  pass_to_pass: z.object({ passed: z.number().int(), total: z.number().int() }).nullable(),
  patch_files: z.array(z.string()),
});

/** One accepted trace: a line of `trajectories.jsonl`. Token fields are absent (never zeros) when the backend returned no token ids. */
export const GeneratedTrace = z.object({
  /** `task_id/sample_index/trace_index`: unique in the output. */
  id: z.string(),
  /** Links the rows of one rollout (sub-agents and compaction give several traces). */
  rollout_id: z.string(),
  task_id: z.string(),
  sample_index: z.number().int().nonnegative(),
  trace_index: z.number().int().nonnegative(),
  trace_count: z.number().int().positive(),
  messages: z.array(ChatMessage),
  tools: z.array(ChatTool),
  prompt_ids: z.array(z.number().int()).optional(),
  response_ids: z.array(z.number().int()).optional(),
  loss_mask: z.array(z.union([z.literal(0), z.literal(1)])).optional(),
  /** One per response token: the engine's logprob where sampled, 0.0 where the mask is 0. */
  response_logprobs: z.array(z.number()).optional(),
  /** Prompt + response tokens of this trace: the token ids' length, else the engine's usage count; absent when neither is known. */
  token_count: z.number().int().nonnegative().optional(),
  finish_reason: z.string().nullable(),
  reward: z.number().nullable(),
  harness: z.object({ name: z.string(), version: z.string().nullable() }),
  model: z.string(),
  backend: z.string(),
  evaluation: EvaluationSummary.nullable(),
  /** Milliseconds: the rollout end to end, the harness run, the evaluation. */
  timing: z.object({ e2e_ms: z.number(), run_ms: z.number(), eval_ms: z.number() }),
  /** Seq numbers of the recorded LLM calls this trace was built from. */
  calls: z.array(z.number().int().nonnegative()),
  generated_at: z.string(),
});
export type GeneratedTrace = z.infer<typeof GeneratedTrace>;

export const ATTEMPT_OUTCOMES = ["accepted", "rejected", "duplicate", "failed"] as const;

/** One finished task × sample: a line of `attempts.jsonl`, written after its rows. A restart skips the attempts listed here. */
export const GenerateAttempt = z.object({
  task_id: z.string(),
  sample_index: z.number().int().nonnegative(),
  rollout_id: z.string(),
  status: SessionResultStatus,
  reward: z.number().nullable(),
  outcome: z.enum(ATTEMPT_OUTCOMES),
  /** Why it was not accepted: `rejected`, `duplicate`, `agent_timeout`, `no_reward` or the pipeline's failure cause (`engine_unreachable`, `sandbox_start`, …). */
  failure_kind: z.string().nullable(),
  /** The accepted sample of the same task this one nearly repeats (`outcome: duplicate`). */
  duplicate_of: z.number().int().nonnegative().nullable(),
  rows: z.number().int().nonnegative(),
  /** Tokens of its rows (absent when unknown). */
  tokens: z.number().int().nonnegative().optional(),
  /** Summed engine usage over every call of the rollout. */
  engine_tokens: z.object({ prompt: z.number().int().nonnegative(), completion: z.number().int().nonnegative() }),
  duration_ms: z.number().nonnegative(),
  finished_at: z.string(),
});
export type GenerateAttempt = z.infer<typeof GenerateAttempt>;

/** The settings a run's output folder was started with (`run.json`); a restart must match them. */
export const GenerateSettings = z.object({
  tasks_file: z.string(),
  tasks_sha256: z.string(),
  harness: z.string(),
  model: z.string(),
  backend: z.string(),
  engine: z.string(),
  accept: z.string(),
  dedup: z.number().nullable(),
});
export type GenerateSettings = z.infer<typeof GenerateSettings>;

/** `summary.json`, written when a run ends (totals over the folder: resumed runs included). */
export const GenerateSummary = z.object({
  tasks: z.number().int().nonnegative(),
  samples: z.number().int().positive(),
  attempted: z.number().int().nonnegative(),
  accepted: z.number().int().nonnegative(),
  /** accepted / attempted; null before any attempt. */
  acceptance_rate: z.number().nullable(),
  rows: z.number().int().nonnegative(),
  /** Mean tokens (prompt + response) of an accepted attempt's rows; null when none is known. */
  tokens_per_accepted_trajectory: z.number().nullable(),
  engine_tokens: z.object({ prompt: z.number().int().nonnegative(), completion: z.number().int().nonnegative() }),
  /** Attempts already in the folder when this run started. */
  resumed_attempts: z.number().int().nonnegative(),
  /** This run's wall time. */
  wall_time_s: z.number().nonnegative(),
  failures_by_kind: z.record(z.string(), z.number().int().positive()),
  /** Attempts not run (interrupted): task × samples minus attempted. */
  remaining: z.number().int().nonnegative(),
});
export type GenerateSummary = z.infer<typeof GenerateSummary>;
