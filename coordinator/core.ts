// Why: the parts of the coordinator that make decisions (dispatch, outcomes, node presence,
// restore) share one view of its state — the rollout and node tables with their movers, the
// running groups, the ordered write chain, the event bus — and nothing else of each other.
import type { EventBus } from "../lib/events.ts";
import type { TaskCatalog } from "../lib/task-catalog.ts";
import type { CoordinatorConfig } from "./config.ts";
import type { CoordinatorEvents } from "./events.ts";
import type { GroupState } from "./groups.ts";
import type { NodeBook } from "./node-states.ts";
import type { RolloutBook } from "./rollout-states.ts";
import type { CoordinatorRepo } from "./store/repo.ts";
import type { TaskStatsBook } from "./task-stats.ts";

export interface CoordinatorCore {
  readonly config: CoordinatorConfig;
  readonly repo: CoordinatorRepo;
  readonly events: EventBus<CoordinatorEvents>;
  readonly rollouts: RolloutBook;
  readonly nodes: NodeBook;
  /** Running groups (finished ones leave). */
  readonly groups: Map<string, GroupState>;
  readonly now: () => number;
  /** Runs store writes one after another, in the order decisions were made. */
  persist<T>(write: () => Promise<T>): Promise<T>;
  policyVersion(): number;
  isPaused(): boolean;
  scheduleDispatch(): void;
  /** The task file trainers name tasks from (replacements of `next_task` resolve ids here). */
  readonly tasks: TaskCatalog;
  /** Per-task pass-rate estimates. */
  readonly taskStats: TaskStatsBook;
  /** Mints group and rollout ids and submission order for a new group. */
  readonly mint: { id(prefix: string): string; seq(): number };
}
