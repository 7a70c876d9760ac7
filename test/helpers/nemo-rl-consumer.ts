// Why: the Gym tests must check a `/run` answer the way NeMo RL consumes it, not the way Polar
// builds it. This follows NeMo RL's reader (nemo_rl/environments/nemo_gym.py,
// `_postprocess_nemo_gym_to_nemo_rl_result`; nemo_rl/experience/rollouts.py
// `_extract_mask_sample_flags`; rollout_manager.py `_result_to_completion`) step for step and
// fails where NeMo RL would raise.

export interface NemoRlMessage {
  role: "user" | "assistant";
  token_ids: number[];
  generation_logprobs?: number[];
}

export interface NemoRlSample {
  message_log: NemoRlMessage[];
  /** float(result["reward"]). */
  reward: number;
  /** bool(result["instance_config"].get("mask_sample", False)). */
  mask_sample: boolean;
  /** The whole token sequence NeMo RL trains on. */
  seen_token_ids: number[];
}

export class NemoRlRejected extends Error {}

type Json = Record<string, any>;

/** NeMo RL's `_is_trainable_output_item`: `bool(item.get("generation_token_ids"))`. */
function isTrainable(item: Json): boolean {
  return Array.isArray(item.generation_token_ids) && item.generation_token_ids.length > 0;
}

export function consumeAsNemoRl(row: Json, result: Json): NemoRlSample {
  if (typeof result !== "object" || result === null) throw new NemoRlRejected("Hit a non-successful response when querying NeMo Gym for rollouts");
  const response = result.response;
  // result_input = nemo_gym_result["responses_create_params"].get("input", []): a KeyError without the echo.
  if (!result.responses_create_params || !("input" in result.responses_create_params))
    throw new NemoRlRejected("responses_create_params.input missing from the result");
  if (!row.responses_create_params) throw new NemoRlRejected("responses_create_params missing from the row");
  const messageLog: NemoRlMessage[] = [];
  const seen: number[] = [];
  for (const item of response.output as Json[]) {
    if (!isTrainable(item)) continue;
    const prompt = item.prompt_token_ids as number[];
    const head = prompt.slice(0, seen.length);
    if (head.length !== seen.length || head.some((id, i) => id !== seen[i])) {
      throw new NemoRlRejected(`Non-contiguous messages found! seen ${seen.length} tokens; this prompt has ${prompt.length} and differs within them`);
    }
    const generation = item.generation_token_ids as number[];
    const logprobs = item.generation_log_probs as number[];
    if (!Array.isArray(logprobs) || logprobs.length !== generation.length)
      throw new NemoRlRejected("generation_log_probs must have one entry per generated token");
    if (logprobs.some((lp) => typeof lp !== "number" || Number.isNaN(lp))) throw new NemoRlRejected("Generation logprobs contain NaN");
    messageLog.push({ role: "user", token_ids: prompt.slice(seen.length) });
    messageLog.push({ role: "assistant", token_ids: generation, generation_logprobs: logprobs });
    seen.push(...prompt.slice(seen.length), ...generation);
  }
  if (messageLog.length === 0) throw new NemoRlRejected("NeMo Gym returned a result with no generation data");
  const reward = Number(result.reward);
  if (typeof result.reward !== "number" || !Number.isFinite(reward))
    throw new NemoRlRejected(`float(result["reward"]) fails on ${JSON.stringify(result.reward)}`);
  return { message_log: messageLog, reward, mask_sample: Boolean((result.instance_config ?? {}).mask_sample ?? false), seen_token_ids: seen };
}
