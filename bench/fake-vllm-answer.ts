// Why: the CPU benchmarks need the answer a vLLM engine gives the gateway (prompt ids, sampled ids,
// one logprob entry per sampled id), without an engine's own cost in the measurement.

/** Sampled tokens per answer. */
export const OUTPUT_TOKENS = 32;

/** A vLLM chat answer with `prompt_ids` prompt token ids and OUTPUT_TOKENS sampled ids with logprobs. */
export function vllmAnswer(promptIds: number, model = "Qwen/Qwen3-8B"): string {
  const prompt = Array.from({ length: promptIds }, (_, i) => (i * 7919 + 13) % 151_000);
  const output = Array.from({ length: OUTPUT_TOKENS }, (_, i) => 1000 + i);
  const content = "I will run the test suite to see which test fails first.";
  return JSON.stringify({
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, reasoning: null, tool_calls: [] },
        logprobs: { content: output.map((id) => ({ token: `t${id}`, logprob: -0.125 - id / 1e5, bytes: [116], top_logprobs: [] })) },
        finish_reason: "stop",
        stop_reason: null,
        token_ids: output,
      },
    ],
    usage: { prompt_tokens: promptIds, total_tokens: promptIds + OUTPUT_TOKENS, completion_tokens: OUTPUT_TOKENS },
    prompt_logprobs: null,
    prompt_token_ids: prompt,
  });
}
