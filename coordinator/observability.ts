// Why: everything an operator observes on the coordinator — Prometheus metrics, the `/events`
// feed and the dashboard's view with its pause lever — attached to the coordinator's events in one
// place, before it restores (so a restored cluster is counted and announced like any other).
import type { CoordinatorObservability } from "./app.ts";
import type { Coordinator } from "./coordinator.ts";
import { newId } from "./coordinator.ts";
import { coordinatorDashboard } from "./dashboard-view.ts";
import { coordinatorEventFeed } from "./event-feed.ts";
import { coordinatorMetrics } from "./metrics.ts";
import type { PauseBook } from "./pauses.ts";
import type { TrainerStream } from "./trainer-streams.ts";

export function observeCoordinator(
  coordinator: Coordinator,
  pauses: PauseBook,
  trainers: () => Iterable<Readonly<TrainerStream>>,
  heartbeatMs?: number,
): CoordinatorObservability {
  const metrics = coordinatorMetrics(coordinator, { trainers });
  const feed = coordinatorEventFeed(coordinator, heartbeatMs === undefined ? {} : { heartbeatMs });
  const dashboard = coordinatorDashboard(coordinator, { metrics, feed, trainers });
  const pause = () =>
    new Promise<{ request_id: string; nodes: number }>((resolve) => {
      const requestId = newId("pause");
      const nodes = [...coordinator.nodes.values()].filter((n) => n.peer !== null);
      coordinator.pauseRequested(requestId, nodes.length);
      pauses.start(requestId, nodes, (drained) => {
        coordinator.pauseDrained(requestId, drained);
        resolve({ request_id: requestId, nodes: drained });
      });
    });
  return { metrics: metrics.registry, feed, operator: { dashboard, pause } };
}
