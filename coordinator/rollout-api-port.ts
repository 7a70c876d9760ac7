// Why: the coordinator's side of Polar's rollout API (lib/rollout-api): a task is a group with no
// trainer, run over the cluster. This adapter is the only place that maps tasks to groups, and it
// sees only rollout-API groups — a trainer-stream group is never shown as a task, and never
// replaces one's status. It reads the Coordinator through the few public members listed in
// CoordinatorView, so the core can change behind it.
import { SessionResult, type TaskResult, type TaskStatus } from "../protocol/rollout.ts";
import type { CallbackSender } from "../lib/rollout-api/callbacks.ts";
import type { RolloutApiPort, SubmitOutcome } from "../lib/rollout-api/port.ts";
import type { AcceptedTask } from "../lib/rollout-api/submission.ts";
import { taskStatus, type TaskPhase } from "../lib/rollout-api/task-status.ts";
import type { Coordinator } from "./coordinator.ts";
import type { GroupState } from "./groups.ts";
import { wholeSession } from "./packed-results.ts";
import type { GroupRow, ResultWithTraces } from "./store/repo.ts";

/** What this adapter uses of the Coordinator. */
type CoordinatorView = Pick<
  Coordinator,
  "on" | "submitGroup" | "submitRefusal" | "cancelGroup" | "groups" | "repo" | "queue" | "active" | "nodes" | "policyVersion"
>;

export interface CoordinatorRolloutOptions {
  callbacks: CallbackSender;
  /** Also POST the TaskResult of a cancelled task (Polar posts nothing for those). */
  callbackOnCancel: boolean;
}

/** A rollout the coordinator cancelled has no session of its own; a cancel drops those, early stop keeps them. */
const CANCELLED_BY_COORDINATOR = "CANCELLED";

export function coordinatorRolloutPort(coordinator: CoordinatorView, options: CoordinatorRolloutOptions): RolloutApiPort {
  const cancelling = new Set<string>();

  const liveGroup = (taskId: string): GroupState | undefined => {
    for (const g of coordinator.groups.values()) if (g.taskId === taskId && g.trainerId === null) return g;
    return undefined;
  };

  const phaseOf = (row: GroupRow): TaskPhase =>
    row.state === "cancelled" ? "cancelled" : row.state === "running" && cancelling.has(row.id) ? "cancelling" : "running";

  function sessions(rows: ResultWithTraces[], phase: TaskPhase): SessionResult[] {
    const kept = phase === "cancelled" || phase === "cancelling" ? rows.filter((r) => r.status !== CANCELLED_BY_COORDINATOR) : rows;
    return kept.map((r) => SessionResult.parse(wholeSession(r)));
  }

  async function status(taskId: string): Promise<TaskStatus | undefined> {
    const row = await coordinator.repo.findGroupByTaskId(taskId);
    if (!row) return undefined;
    const phase = phaseOf(row);
    return taskStatus(taskId, phase, row.n, sessions(await coordinator.repo.groupResultsWithTraces(row.id), phase));
  }

  coordinator.on({
    groupFinished: (group) => {
      cancelling.delete(group.id);
      if (group.trainerId !== null || !group.callbackUrl || (group.cancelled && !options.callbackOnCancel)) return;
      const url = group.callbackUrl;
      void status(group.taskId).then((s) => {
        if (!s) return;
        const result: TaskResult = { task_id: s.task_id, status: s.status, results: s.results, result_paths: s.result_paths };
        return options.callbacks.send(url, result);
      });
    },
  });

  return {
    refusal: () => coordinator.submitRefusal(),
    async submit({ request }: AcceptedTask): Promise<SubmitOutcome> {
      const live = liveGroup(request.task_id);
      if (live) return { accepted: false, status: 409, detail: `task ${request.task_id} is already ${cancelling.has(live.id) ? "cancelling" : "running"}` };
      await coordinator.submitGroup({
        trainerId: null,
        taskId: request.task_id,
        request: { ...request, num_samples: 1 },
        n: request.num_samples,
        earlyStopMinUsable: request.early_stop_min_usable_sessions ?? null,
        advantages: "none",
        callbackUrl: request.callback_url ?? null,
      });
      return { accepted: true };
    },
    status,
    async cancel(taskId) {
      const group = liveGroup(taskId);
      if (group) {
        cancelling.add(group.id);
        try {
          await coordinator.cancelGroup(group, "task cancelled");
        } finally {
          cancelling.delete(group.id);
        }
      }
      return status(taskId);
    },
    async serviceStatus() {
      let assigned = 0;
      for (const r of coordinator.active.values()) if (r.state === "ASSIGNED") assigned++;
      let nodes = 0;
      for (const n of coordinator.nodes.values()) if (n.peer) nodes++;
      return {
        status: "ok",
        queued_sessions: coordinator.queue.size,
        running_sessions: assigned,
        running_tasks: coordinator.groups.size,
        nodes,
        policy_version: coordinator.policyVersion,
      };
    },
  };
}
