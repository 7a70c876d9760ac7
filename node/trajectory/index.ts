// Why: the trajectory module's public surface — the gateway's session trajectory route, the
// rollout pipeline and the bench import from here only.
export { STRATEGIES, Strategy, Trace, TrajectoryResult } from "../../protocol/trace.ts";
export { rebuild, type RebuildOptions } from "./rebuild.ts";
export { DEFAULT_VOLATILE_PATTERNS } from "./normalisers.ts";
export type { ChatRenderInput, TrajectoryTokenizer } from "./tokenizer-port.ts";
