// Why: the trajectory module's public surface — the gateway's session trajectory route, the
// rollout pipeline and the bench import from here only.
//
// Conventions (every strategy): `prompt_ids` is the first call's prompt; `response_ids` is all
// that follows. Sampled ids: loss_mask 1 and the engine's logprob. Inserted context (tool
// results, template glue, later user turns, taken from the next prompt): loss_mask 0 and a null
// logprob. Merge strategies train on the sampled ids only, so they are 100% exactly sampled;
// `retokenize` re-renders the final conversation and reports the tokens that do not match.
export { STRATEGIES, Strategy, Trace, TrajectoryResult } from "../../protocol/trace.ts";
export { rebuild, type RebuildOptions } from "./rebuild.ts";
export { DEFAULT_VOLATILE_PATTERNS } from "./normalisers.ts";
export type { ChatRenderInput, TrajectoryTokenizer } from "./tokenizer-port.ts";
