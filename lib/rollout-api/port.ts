// Why: the rollout API's routes are written once (routes.ts); what differs between `polar node`
// (a TaskBook over its own pipeline) and the coordinator (groups over the cluster) is only this
// small port, which each service implements in one adapter module.
import type { TaskStatus } from "../../protocol/rollout.ts";
import type { AcceptedTask } from "./submission.ts";

/** 422: the service cannot evaluate the task (a missing requirement, named in `detail`). */
export type SubmitOutcome = { accepted: true } | { accepted: false; status: 409 | 422 | 503; detail: string };

export interface RolloutApiPort {
  /** Why new tasks are refused right now (a draining node), or null. */
  refusal(): string | null;
  /** Stores the task, then starts its sessions (never one without the other); 409 while a task of that id is live. */
  submit(task: AcceptedTask): Promise<SubmitOutcome>;
  /** The task's status (finished ones too, for the service's retention period); undefined when unknown. */
  status(taskId: string): Promise<TaskStatus | undefined>;
  /**
   * Cancels every unfinished session of a live task and resolves once the task is `cancelled`
   * (a finished task answers its status unchanged); undefined when unknown.
   */
  cancel(taskId: string): Promise<TaskStatus | undefined>;
  /** GET /rollout/status: the service's own view of its load. */
  serviceStatus(): Promise<Record<string, unknown>>;
}
