// Why: in RL the trainer, not the harness, decides how the policy samples: harnesses ask for
// max_tokens up to the model's whole context (Qwen Code: 32000, Claude Code: 32000) or for
// their own temperature. The gateway applies the trainer's caps before every engine call, and
// the recorded request shows what the engine was really asked. Thinking on/off likewise.
import type { PivotRequest } from "./pivot.ts";

export interface SamplingPolicy {
  /** Upper bound on max_tokens; also the value used when the harness sends none. */
  maxTokensCap?: number;
  /** Replaces the harness's temperature (on-policy sampling wants the trainer's). */
  temperature?: number;
  topP?: number;
  /** Forces chat_template_kwargs.enable_thinking (the trainer decides whether the policy reasons). */
  thinking?: boolean;
}

export function applySamplingPolicy(request: PivotRequest, policy: SamplingPolicy): PivotRequest {
  if (Object.values(policy).every((v) => v === undefined)) return request;
  const sampling = { ...request.sampling };
  if (policy.maxTokensCap !== undefined) sampling.max_tokens = Math.min(sampling.max_tokens ?? policy.maxTokensCap, policy.maxTokensCap);
  if (policy.temperature !== undefined) sampling.temperature = policy.temperature;
  if (policy.topP !== undefined) sampling.top_p = policy.topP;
  return { ...request, sampling, ...(policy.thinking !== undefined ? { thinking: policy.thinking } : {}) };
}
