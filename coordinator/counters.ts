// Why: the coordinator's running totals for /metrics and the admin stats are counted from its
// events, so counting is an observer like any other and never sits in a decision's path.
import type { EventBus } from "../lib/events.ts";
import { STAGE_TIMINGS } from "../protocol/rollout.ts";
import type { CoordinatorEvents } from "./events.ts";

export interface CoordinatorCounters {
  dispatched: number;
  results_accepted: number;
  results_late_dropped: number;
  results_streamed: number;
  results_streamed_bytes: number;
  requeued: number;
  nodes_lost: number;
  /** Completed groups without reward spread, fresh groups started in place of flat ones, flat ones whose replacements ran out. */
  groups_flat: number;
  groups_replaced: number;
  replacements_exhausted: number;
  /** Stage durations summed from results' timings (ms) and their count. */
  stage_ms: Record<string, { sum: number; count: number }>;
}

/** Counters kept up to date by listeners on `events`. */
export function countEvents(events: EventBus<CoordinatorEvents>): CoordinatorCounters {
  const k: CoordinatorCounters = {
    dispatched: 0,
    results_accepted: 0,
    results_late_dropped: 0,
    results_streamed: 0,
    results_streamed_bytes: 0,
    requeued: 0,
    nodes_lost: 0,
    groups_flat: 0,
    groups_replaced: 0,
    replacements_exhausted: 0,
    stage_ms: {},
  };
  events.on("rollout.dispatched", () => void k.dispatched++);
  events.on("rollout.requeued", (e) => void (k.requeued += e.rollout_ids.length));
  events.on("node.lost", () => void k.nodes_lost++);
  events.on("group.flat", () => void k.groups_flat++);
  events.on("group.replaced", () => void k.groups_replaced++);
  events.on("group.replacements_exhausted", () => void k.replacements_exhausted++);
  events.on("result.dropped", () => void k.results_late_dropped++);
  events.on("result.delivered", (e) => {
    k.results_streamed++;
    k.results_streamed_bytes += e.bytes;
  });
  events.on("result.accepted", (e) => {
    k.results_accepted++;
    for (const key of STAGE_TIMINGS) {
      const ms = e.timing[key];
      if (ms === undefined || !(ms > 0)) continue;
      const s = (k.stage_ms[key] ??= { sum: 0, count: 0 });
      s.sum += ms;
      s.count++;
    }
  });
  return k;
}
