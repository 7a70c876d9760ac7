// Why: the coordinator's state and every decision it makes — what is queued, which node runs
// what, when a rollout is finished, requeued or cancelled, when a group completes — in one place,
// independent of the WebSocket and HTTP transports (link handlers and routes call into it).
// Every change that someone will be told about is written to the store first, through one
// ordered write chain, so the store never disagrees with what was sent.
import { randomBytes } from "node:crypto";
import type { Assignment, ReportedResult } from "../protocol/node-link.ts";
import type { TaskRequest } from "../protocol/rollout.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import type { CoordinatorConfig } from "./config.ts";
import { groupFromRow, isComplete, usableCount, type GroupState } from "./groups.ts";
import { LeastLoaded, newNodeState, type NodeState } from "./nodes.ts";
import { RolloutQueue } from "./queue.ts";
import { isUsable, sessionReward, streamedResult, syntheticErrorResult } from "./results.ts";
import { GroupCommit } from "./group-commit.ts";
import type { CoordinatorRepo, NewRollout, StoredResult, TERMINAL_ROLLOUT_STATES } from "./store/repo.ts";
import { newTrainerStream, ResultCache, type TrainerStream } from "./trainer-streams.ts";

export type TerminalState = (typeof TERMINAL_ROLLOUT_STATES)[number];

export interface RolloutState {
  id: string;
  groupId: string;
  idx: number;
  image: string;
  priority: number;
  seq: number;
  state: "queued" | "assigned";
  nodeId: string | null;
  attempt: number;
  policyVersionStarted: number | null;
  /** The node-side stage last reported (init, run, postrun…). */
  stage: string | null;
}

export interface CoordinatorEvents {
  /** A group finished (every member has a result): trainer `group` message or rollout API callback. */
  groupFinished(group: GroupState): void;
  /** A stored result is ready for its trainer's stream. */
  resultReady(trainerId: string, result: StreamedResult): void;
}

export interface CoordinatorCounters {
  dispatched: number;
  results_accepted: number;
  results_late_dropped: number;
  results_streamed: number;
  results_streamed_bytes: number;
  requeued: number;
  nodes_lost: number;
  /** Stage durations summed from results' timings (ms) and their count. */
  stage_ms: Record<string, { sum: number; count: number }>;
}

const DISPATCH_BATCH = 4096;
const STAGE_TIMINGS = ["init_ms", "ready_queue_ms", "run_ms", "postrun_queue_ms", "postrun_ms", "container_start_ms", "prepare_ms", "agent_exec_ms", "build_ms", "eval_ms", "e2e_ms"];

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export class Coordinator {
  readonly queue = new RolloutQueue();
  readonly active = new Map<string, RolloutState>();
  readonly groups = new Map<string, GroupState>();
  readonly nodes = new Map<string, NodeState>();
  readonly trainers = new Map<string, TrainerStream>();
  readonly cache: ResultCache;
  readonly counters: CoordinatorCounters = { dispatched: 0, results_accepted: 0, results_late_dropped: 0, results_streamed: 0, results_streamed_bytes: 0, requeued: 0, nodes_lost: 0, stage_ms: {} };
  policyVersion = 0;
  paused = false;
  private seq = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private dispatchScheduled = false;
  private dispatching = false;
  private dispatchAgain = false;
  private readonly listeners: Partial<CoordinatorEvents>[] = [];
  private readonly results = new GroupCommit<StoredResult>((write) => this.persist(write), (batch) => this.repo.saveResults(batch, this.now()));
  /** Trainer acknowledgements, written in batches. */
  readonly acks = new GroupCommit<{ trainerId: string; ids: string[] }>(
    (write) => this.persist(write),
    (batch) => this.repo.ack(batch, this.now()),
  );

  constructor(
    readonly config: CoordinatorConfig,
    readonly repo: CoordinatorRepo,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new ResultCache(config.resultCacheBytes);
  }

  on(listener: Partial<CoordinatorEvents>): void {
    this.listeners.push(listener);
  }

  /** Runs store writes one after another, in the order decisions were made. */
  persist<T>(write: () => Promise<T>): Promise<T> {
    const next = this.chain.then(write);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Reloads what a previous life left: running groups, queued and assigned rollouts. */
  async restore(): Promise<void> {
    this.policyVersion = Number((await this.repo.getMeta("policy_version")) ?? 0);
    this.seq = await this.repo.maxSeq();
    const { groups, rollouts } = await this.repo.loadActive();
    const members = new Map<string, string[]>();
    for (const r of rollouts) (members.get(r.groupId) ?? members.set(r.groupId, []).get(r.groupId)!).push(r.id);
    for (const row of groups) this.groups.set(row.id, groupFromRow(row, []));
    for (const done of await this.repo.finishedOfGroups(groups.map((g) => g.id))) {
      const group = this.groups.get(done.groupId);
      if (group) group.outcomes.set(done.id, { status: done.state, reward: null, usable: done.state === "completed" });
    }
    for (const r of rollouts) {
      const group = this.groups.get(r.groupId);
      if (!group) continue;
      group.members.push(r.id);
      const state: RolloutState = { id: r.id, groupId: r.groupId, idx: r.idx, image: r.image, priority: r.priority, seq: r.seq, state: "queued", nodeId: null, attempt: r.attempt, policyVersionStarted: r.policyVersionStarted, stage: null };
      this.active.set(r.id, state);
      if (r.state === "assigned" && r.nodeId) {
        // The node may still be running it: wait for it to reconnect (grace) before requeueing.
        state.state = "assigned";
        state.nodeId = r.nodeId;
        const node = this.nodes.get(r.nodeId) ?? this.addDisconnectedNode(r.nodeId);
        node.assigned.add(r.id);
      } else {
        this.queue.push(state);
      }
    }
    this.scheduleDispatch();
  }

  private addDisconnectedNode(id: string): NodeState {
    const node = newNodeState(id, this.now());
    this.nodes.set(id, node);
    this.startGrace(node);
    return node;
  }

  // ---- groups in ------------------------------------------------------------------------

  /** Accepts a group: stored with its rollouts before anyone hears of it, then queued. */
  async submitGroup(args: {
    trainerId: string | null;
    taskId: string;
    request: TaskRequest;
    n: number;
    earlyStopMinUsable: number | null;
    advantages: GroupState["advantages"];
    callbackUrl: string | null;
  }): Promise<GroupState> {
    const groupId = newId("grp");
    const now = this.now();
    const image = args.request.runtime?.image ?? "default";
    const priority = args.request.dispatch_priority;
    const rows: NewRollout[] = [];
    for (let idx = 0; idx < args.n; idx++) {
      rows.push({ id: newId("ro"), groupId, idx, seq: ++this.seq, state: "queued", priority, image, attempt: 0, createdAt: now });
    }
    const group: GroupState = { id: groupId, ...args, members: rows.map((r) => r.id), outcomes: new Map(), stopping: false, cancelled: false };
    await this.persist(() =>
      this.repo.insertGroup(
        { id: groupId, trainerId: args.trainerId, taskId: args.taskId, request: args.request as Record<string, unknown>, n: args.n, earlyStopMinUsable: args.earlyStopMinUsable, advantages: args.advantages, callbackUrl: args.callbackUrl, state: "running", createdAt: now },
        rows,
      ),
    );
    this.groups.set(groupId, group);
    for (const row of rows) {
      const state: RolloutState = { id: row.id, groupId, idx: row.idx, image, priority, seq: row.seq, state: "queued", nodeId: null, attempt: 0, policyVersionStarted: null, stage: null };
      this.active.set(row.id, state);
      this.queue.push(state);
    }
    this.scheduleDispatch();
    return group;
  }

  // ---- dispatch ---------------------------------------------------------------------------

  scheduleDispatch(): void {
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    queueMicrotask(() => {
      this.dispatchScheduled = false;
      void this.dispatch();
    });
  }

  private async dispatch(): Promise<void> {
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = true;
    try {
      do {
        this.dispatchAgain = false;
        const batch = this.pickAssignments();
        if (batch.length === 0) continue;
        const at = this.now();
        await this.persist(() => this.repo.assign(batch.map((a) => ({ rolloutId: a.rollout.id, nodeId: a.node.id, attempt: a.attempt, policyVersion: this.policyVersion })), at));
        for (const { rollout, node, attempt } of batch) {
          // Cancelled or reassigned while the batch was being written: nothing to send.
          if (rollout.state !== "assigned" || rollout.attempt !== attempt || rollout.nodeId !== node.id || !node.peer) continue;
          node.peer.send({ type: "assign", assignment: this.assignmentFor(rollout) });
          this.counters.dispatched++;
        }
        if (batch.length === DISPATCH_BATCH) this.dispatchAgain = true;
      } while (this.dispatchAgain);
    } finally {
      this.dispatching = false;
    }
  }

  private pickAssignments(): { rollout: RolloutState; node: NodeState; attempt: number }[] {
    const batch: { rollout: RolloutState; node: NodeState; attempt: number }[] = [];
    if (this.queue.size === 0) return batch;
    const heap = new LeastLoaded(this.nodes.values());
    while (batch.length < DISPATCH_BATCH) {
      const node = heap.pop();
      if (!node) break;
      const item = this.queue.take(node.warm);
      if (!item) break;
      const rollout = this.active.get(item.id);
      if (!rollout || rollout.state !== "queued") continue;
      rollout.state = "assigned";
      rollout.nodeId = node.id;
      rollout.attempt += 1;
      rollout.policyVersionStarted = this.policyVersion;
      rollout.stage = null;
      node.assigned.add(rollout.id);
      batch.push({ rollout, node, attempt: rollout.attempt });
      if (LeastLoaded.accepts(node)) heap.push(node);
    }
    return batch;
  }

  assignmentFor(rollout: RolloutState): Assignment {
    const group = this.groups.get(rollout.groupId)!;
    return {
      rollout_id: rollout.id,
      attempt: rollout.attempt,
      group_id: group.id,
      request: group.request,
      remaining_timeout_seconds: group.request.timeout_seconds,
    };
  }

  // ---- results ------------------------------------------------------------------------------

  /**
   * A node's result: accepted only from the node holding the current attempt; a late result
   * (reassigned or cancelled meanwhile) or a repeat is dropped. Returns whether the node may
   * forget it (always, once the store has what it must keep).
   */
  async acceptResult(nodeId: string, rolloutId: string, attempt: number, result: ReportedResult): Promise<"accepted" | "dropped"> {
    const rollout = this.active.get(rolloutId);
    if (!rollout || rollout.state !== "assigned" || rollout.attempt !== attempt || rollout.nodeId !== nodeId) {
      this.counters.results_late_dropped++;
      // A repeat may race its first copy's write: the node forgets it only once that is durable.
      await this.persist(async () => undefined);
      return "dropped";
    }
    const state: TerminalState = result.status === "COMPLETED" ? "completed" : result.status === "TIMEOUT" ? "timeout" : "error";
    for (const key of STAGE_TIMINGS) {
      const ms = (result.timing as Record<string, unknown> | undefined)?.[key];
      if (typeof ms === "number" && ms > 0) {
        const s = (this.counters.stage_ms[key] ??= { sum: 0, count: 0 });
        s.sum += ms;
        s.count++;
      }
    }
    await this.finish(rollout, result, state, result.error && typeof result.error === "string" ? result.error : null);
    this.counters.results_accepted++;
    return "accepted";
  }

  /** Ends a rollout with a result (reported, or synthetic for cancellations and exhausted retries). */
  private async finish(rollout: RolloutState, result: ReportedResult, state: TerminalState, cause: string | null): Promise<void> {
    const group = this.groups.get(rollout.groupId)!;
    this.forget(rollout);
    const started = rollout.policyVersionStarted ?? this.policyVersion;
    const stale = this.config.maxStaleness !== undefined && started < this.policyVersion - this.config.maxStaleness;
    const status = state === "cancelled" ? "CANCELLED" : result.status;
    const reward = sessionReward(result);
    group.outcomes.set(rollout.id, { status, reward, usable: state !== "cancelled" && isUsable(result) });
    await this.results.add({ rolloutId: rollout.id, groupId: group.id, trainerId: group.trainerId, status, reward, session: result as Record<string, unknown>, policyVersionStarted: started, stale, rolloutState: state, cause, acked: group.trainerId === null });
    if (group.trainerId) {
      const streamed = streamedResult({ result, status, groupId: group.id, rolloutId: rollout.id, policyVersionStarted: started, stale });
      for (const l of this.listeners) l.resultReady?.(group.trainerId, streamed);
    }
    await this.afterOutcome(group);
  }

  private forget(rollout: RolloutState): void {
    this.active.delete(rollout.id);
    this.queue.remove(rollout.id);
    if (rollout.nodeId) this.nodes.get(rollout.nodeId)?.assigned.delete(rollout.id);
    this.scheduleDispatch();
  }

  private async afterOutcome(group: GroupState): Promise<void> {
    if (!group.stopping && group.earlyStopMinUsable !== null && usableCount(group) >= group.earlyStopMinUsable) {
      await this.stopGroup(group, "early stop: enough usable results");
    }
    if (isComplete(group) && this.groups.has(group.id)) {
      this.groups.delete(group.id);
      await this.persist(() => this.repo.setGroupState(group.id, group.cancelled ? "cancelled" : "completed", this.now()));
      for (const l of this.listeners) l.groupFinished?.(group);
    }
  }

  /** Cancels every unfinished member: queued ones at once, running ones on their node. */
  async stopGroup(group: GroupState, cause: string): Promise<void> {
    group.stopping = true;
    for (const id of group.members) {
      const rollout = this.active.get(id);
      if (rollout) await this.cancelRollout(rollout, cause);
    }
  }

  async cancelGroup(group: GroupState, cause: string): Promise<void> {
    group.cancelled = true;
    await this.stopGroup(group, cause);
  }

  private async cancelRollout(rollout: RolloutState, cause: string): Promise<void> {
    const group = this.groups.get(rollout.groupId)!;
    if (rollout.state === "assigned" && rollout.nodeId) {
      this.nodes.get(rollout.nodeId)?.peer?.send({ type: "cancel", rollout_id: rollout.id, attempt: rollout.attempt, reason: cause });
    }
    const result = syntheticErrorResult({ sessionId: rollout.id, taskId: group.taskId, cause: `cancelled: ${cause}`, metadata: group.request.metadata });
    await this.finish(rollout, result, "cancelled", cause);
  }

  /** Removes a group and everything of it (admin delete): running members are cancelled on their nodes. */
  async deleteGroup(groupId: string): Promise<boolean> {
    const group = this.groups.get(groupId);
    if (group) {
      this.groups.delete(groupId);
      for (const id of group.members) {
        const rollout = this.active.get(id);
        if (!rollout) continue;
        if (rollout.state === "assigned" && rollout.nodeId) this.nodes.get(rollout.nodeId)?.peer?.send({ type: "cancel", rollout_id: id, attempt: rollout.attempt, reason: "group deleted" });
        this.forget(rollout);
      }
    }
    const row = await this.repo.findGroup(groupId);
    if (!row) return false;
    await this.persist(() => this.repo.deleteGroup(groupId));
    return true;
  }

  // ---- nodes --------------------------------------------------------------------------------

  /** A node went silent or closed: its rollouts wait `nodeGraceMs` for it, then move on. */
  nodeDisconnected(node: NodeState): void {
    node.peer = null;
    this.startGrace(node);
  }

  private startGrace(node: NodeState): void {
    if (node.graceTimer) clearTimeout(node.graceTimer);
    node.graceTimer = setTimeout(() => void this.nodeLost(node), this.config.nodeGraceMs);
  }

  private async nodeLost(node: NodeState): Promise<void> {
    node.graceTimer = null;
    if (node.peer) return;
    this.nodes.delete(node.id);
    this.counters.nodes_lost++;
    await this.releaseFromNode(node, [...node.assigned], `node ${node.id} lost`);
  }

  /** Rollouts a node no longer runs: back to the queue, or failed once attempts are spent. */
  async releaseFromNode(node: NodeState, ids: string[], cause: string): Promise<void> {
    const requeue: RolloutState[] = [];
    for (const id of ids) {
      node.assigned.delete(id);
      const rollout = this.active.get(id);
      if (!rollout || rollout.nodeId !== node.id) continue;
      if (rollout.attempt >= this.config.maxAttempts) {
        const group = this.groups.get(rollout.groupId)!;
        const result = syntheticErrorResult({ sessionId: rollout.id, taskId: group.taskId, cause: `${cause}; no attempts left (${rollout.attempt})`, metadata: group.request.metadata });
        await this.finish(rollout, result, "error", cause);
        continue;
      }
      rollout.state = "queued";
      rollout.nodeId = null;
      rollout.stage = null;
      requeue.push(rollout);
    }
    if (requeue.length === 0) return;
    await this.persist(() => this.repo.requeue(requeue.map((r) => r.id), cause));
    for (const r of requeue) if (r.state === "queued") this.queue.push(r);
    this.counters.requeued += requeue.length;
    this.scheduleDispatch();
  }

  trainerStream(id: string): TrainerStream {
    let stream = this.trainers.get(id);
    if (!stream) this.trainers.set(id, (stream = newTrainerStream(id)));
    return stream;
  }

  /** Waits for every store write issued so far (tests, shutdown). */
  async settled(): Promise<void> {
    await this.chain;
  }

  stop(): void {
    for (const node of this.nodes.values()) if (node.graceTimer) clearTimeout(node.graceTimer);
  }
}
