// Why: Polar's rollout API (NVIDIA's Python rollout server), served by the coordinator over the
// whole cluster, so a trainer integration written for one `polar node` moves here unchanged:
// submit a TaskRequest, poll its TaskStatus, cancel it, and get its TaskResult by callback.
import { Hono } from "hono";
import { readTaskSubmission } from "../../lib/task-submission.ts";
import type { CallbackSender } from "../callbacks.ts";
import type { Coordinator } from "../coordinator.ts";
import type { GroupState } from "../groups.ts";
import type { GroupRow } from "../store/repo.ts";
import type { TaskCatalog } from "../task-catalog.ts";

/** How long a task id cancelled before it was submitted (`register_if_missing`) stays refused. */
const CANCELLED_MEMORY_MS = 3600_000;

export function rolloutApiRoutes(coordinator: Coordinator, tasks: TaskCatalog, callbacks: CallbackSender): Hono {
  const app = new Hono();
  const cancelledEarly = new Map<string, number>();
  const cancelling = new Set<string>();

  coordinator.on({
    groupFinished: (group) => {
      cancelling.delete(group.id);
      if (group.trainerId === null && group.callbackUrl) {
        void taskStatus(group.taskId).then((status) => status && callbacks.send(group.callbackUrl!, { task_id: status.task_id, status: status.status, results: status.results, result_paths: status.result_paths }));
      }
    },
  });

  const latestGroup = (taskId: string) => coordinator.repo.findGroupByTaskId(taskId);
  const running = (taskId: string): GroupState | undefined => [...coordinator.groups.values()].find((g) => g.taskId === taskId && g.trainerId === null);

  async function taskStatus(taskId: string) {
    const row = await latestGroup(taskId);
    if (!row) return null;
    const results = await coordinator.repo.groupResults(row.id);
    const sessions = results.map((r) => r.session);
    return {
      task_id: taskId,
      status: statusWord(row, results.map((r) => r.status), cancelling.has(row.id)),
      total_sessions: row.n,
      completed_sessions: results.length,
      results: sessions,
      result_paths: [] as string[],
    };
  }

  app.post("/task/submit", async (c) => {
    const submission = await readTaskSubmission(c.req.raw, (raw) => {
      const named = typeof raw.task_id === "string" ? tasks.get(raw.task_id) : undefined;
      return named ? { ...named, ...raw } : raw;
    });
    if (!submission.ok) return c.json({ detail: submission.detail }, 422);
    const { request } = submission;
    const cancelledAt = cancelledEarly.get(request.task_id);
    if (running(request.task_id) || (cancelledAt !== undefined && Date.now() - cancelledAt < CANCELLED_MEMORY_MS)) {
      return c.json({ detail: `task ${request.task_id} is already running or was cancelled` }, 409);
    }
    await coordinator.submitGroup({
      trainerId: null,
      taskId: request.task_id,
      request: { ...request, num_samples: 1 },
      n: request.num_samples,
      earlyStopMinUsable: request.early_stop_min_usable_sessions ?? null,
      advantages: "none",
      callbackUrl: request.callback_url ?? null,
    });
    return c.json({ task_id: request.task_id, status: "running" });
  });

  app.get("/task/:id", async (c) => {
    const status = await taskStatus(c.req.param("id"));
    if (!status) {
      if (cancelledEarly.has(c.req.param("id"))) return c.json({ task_id: c.req.param("id"), status: "cancelled", total_sessions: 0, completed_sessions: 0, results: [], result_paths: [] });
      return c.json({ detail: `unknown task ${c.req.param("id")}` }, 404);
    }
    return c.json(status);
  });

  app.delete("/task/:id", async (c) => {
    const id = c.req.param("id");
    const group = running(id);
    if (group) {
      cancelling.add(group.id);
      await coordinator.cancelGroup(group, "task cancelled");
      return c.json({ task_id: id, status: (await taskStatus(id))?.status ?? "cancelled" });
    }
    if (await latestGroup(id)) return c.json({ task_id: id, status: (await taskStatus(id))!.status });
    if (c.req.query("register_if_missing") === "true") {
      cancelledEarly.set(id, Date.now());
      return c.json({ task_id: id, status: "cancelled" });
    }
    return c.json({ detail: `unknown task ${id}` }, 404);
  });

  app.get("/status", (c) => {
    const assigned = [...coordinator.active.values()].filter((r) => r.state === "assigned").length;
    return c.json({
      status: "ok",
      queued_sessions: coordinator.queue.size,
      running_sessions: assigned,
      running_tasks: coordinator.groups.size,
      nodes: [...coordinator.nodes.values()].filter((n) => n.peer).length,
      policy_version: coordinator.policyVersion,
    });
  });

  return app;
}

/** Polar's task status words: running → completed | failed, cancelling → cancelled. */
function statusWord(row: GroupRow, statuses: string[], cancelling: boolean): string {
  if (row.state === "running") return cancelling ? "cancelling" : "running";
  if (row.state === "cancelled") return "cancelled";
  return statuses.length > 0 && statuses.every((s) => s === "ERROR") ? "failed" : "completed";
}
