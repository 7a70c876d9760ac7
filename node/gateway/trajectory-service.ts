// Why: the gateway serves rebuilt trajectories of a session on demand; this joins the call store
// to the rebuilding strategies and validates the strategy a client names.
import { PolarError } from "../errors.ts";
import type { CallsRepo } from "../store/calls-repo.ts";
import { STRATEGIES, rebuild, type Strategy, type TrajectoryResult, type TrajectoryTokenizer } from "../trajectory/index.ts";

export class TrajectoryService {
  private tokenizer: TrajectoryTokenizer | undefined;

  /** `loadTokenizer` runs on first use: most gateways never rebuild, and loading costs ~1 s. */
  constructor(
    private readonly calls: CallsRepo,
    private readonly loadTokenizer: () => TrajectoryTokenizer,
  ) {}

  async rebuild(sessionId: string, strategy: string): Promise<TrajectoryResult & { session_id: string }> {
    if (!(STRATEGIES as readonly string[]).includes(strategy)) {
      throw new PolarError("bad_request", `unknown strategy "${strategy}"; expected one of ${STRATEGIES.join(", ")}`);
    }
    const calls = await this.calls.list(sessionId);
    this.tokenizer ??= this.loadTokenizer();
    return { session_id: sessionId, ...rebuild(calls, strategy as Strategy, { tokenizer: this.tokenizer }) };
  }
}
