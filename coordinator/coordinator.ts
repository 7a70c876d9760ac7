// Why: the coordinator's one entry point for the transports (link handlers, routes): it owns
// the state — rollout and node tables with their movers, running groups, policy version, pause
// — and exposes each decision as a method, delegating to the part that makes it (dispatch,
// outcomes, node presence, restore). Every change someone will be told about is written to the
// store first, through one ordered write chain, and announced on the typed event bus.
import { PeerIdentities } from "./peer-identities.ts";
import { EventBus, type ListenerErrorSink } from "../lib/events.ts";
import { TaskCatalog } from "../lib/task-catalog.ts";
import { PolarError } from "../protocol/errors.ts";
import type { GatewayLatency, NodeHello, NodeRolloutState, StageLoad } from "../protocol/node-link.ts";
import type { CoordinatorConfig } from "./config.ts";
import type { CoordinatorCore } from "./core.ts";
import { countEvents, type CoordinatorCounters } from "./counters.ts";
import { Dispatcher } from "./dispatcher.ts";
import type { CoordinatorEvents } from "./events.ts";
import { GroupCommit } from "./group-commit.ts";
import { admitGroup, planGroup, type GroupState, type NewGroup } from "./groups.ts";
import { newId } from "./ids.ts";
import { leastLoadedWarmFirst } from "./least-loaded-policy.ts";
import { NodePresence } from "./node-presence.ts";
import { NodeBook, slots, type NodePeer, type NodeState } from "./node-states.ts";
import { Outcomes } from "./outcomes.ts";
import type { OutgoingResult, PackedResult } from "./packed-results.ts";
import { cancelStale } from "./policy-versions.ts";
import type { RolloutQueue } from "./queue.ts";
import { restoreFromStore } from "./restore.ts";
import { RolloutBook, type LiveRollout } from "./rollout-states.ts";
import type { SchedulingPolicy } from "./scheduling.ts";
import { StoreGuard, type StoreFailure } from "./store-guard.ts";
import type { CoordinatorRepo } from "./store/repo.ts";
import { TaskStatsBook } from "./task-stats.ts";
import { ResultCache } from "./trainer-streams.ts";

export { newId } from "./ids.ts";

/** The rollout API routes' listener (kept as it was; new code listens on `events`). */
export interface GroupListener {
  groupFinished?(group: GroupState): void;
}

export interface CoordinatorOptions {
  now?: () => number;
  policy?: SchedulingPolicy;
  /** Where a throwing event listener is reported (default: a JSON line on stderr). */
  onListenerError?: ListenerErrorSink;
  /** The task file trainers name tasks from (a `next_task` replacement resolves its ids here). */
  tasks?: TaskCatalog;
}

export class Coordinator {
  /** Node and trainer ids and the secrets that prove them (peer-identities.ts). */
  readonly identities: PeerIdentities;
  readonly events: EventBus<CoordinatorEvents>;
  /** Totals for /metrics and the admin stats, counted from `events`. */
  readonly counters: Readonly<CoordinatorCounters>;
  /** Fresh results for trainer streams, within a byte budget. */
  readonly cache: ResultCache;
  /** Per-task pass-rate estimates (read-only outside the coordinator's decisions). */
  readonly taskStats: TaskStatsBook;
  private readonly rolloutBook: RolloutBook;
  private readonly nodeBook: NodeBook;
  private readonly running = new Map<string, GroupState>();
  private readonly core: CoordinatorCore;
  private readonly dispatcher: Dispatcher;
  private readonly outcomes: Outcomes;
  private readonly presence: NodePresence;
  private readonly acks: GroupCommit<{ trainerId: string; ids: string[] }>;
  private readonly groupListeners: GroupListener[] = [];
  private version = 0;
  private paused = false;
  private seq = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly store: StoreGuard;
  private readonly now: () => number;

  constructor(
    readonly config: CoordinatorConfig,
    readonly repo: CoordinatorRepo,
    options: CoordinatorOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.events = new EventBus<CoordinatorEvents>(options.onListenerError);
    this.counters = countEvents(this.events);
    this.store = new StoreGuard({
      failed: (failure, code) => this.events.emit("store.write_failed", { code, description: failure.description, at: this.now() }),
      recovered: (failure, retries) => this.events.emit("store.writable_again", { description: failure.description, retries, at: this.now() }),
    });
    this.cache = new ResultCache(config.resultCacheBytes);
    this.taskStats = new TaskStatsBook(config.passRateHalfLifeGroups);
    this.nodeBook = new NodeBook(this.events, config.nodeGraceMs, (node) => void this.presence.graceExpired(node), this.now);
    this.rolloutBook = new RolloutBook(this.events, (id) => this.nodeBook.get(id), this.now);
    this.core = {
      config,
      repo,
      events: this.events,
      rollouts: this.rolloutBook,
      nodes: this.nodeBook,
      groups: this.running,
      now: this.now,
      persist: (write) => this.persist(write),
      policyVersion: () => this.version,
      isPaused: () => this.paused,
      scheduleDispatch: () => this.dispatcher.schedule(),
      tasks: options.tasks ?? TaskCatalog.empty(),
      taskStats: this.taskStats,
      mint: { id: newId, seq: () => ++this.seq },
    };
    this.dispatcher = new Dispatcher(this.core, options.policy ?? leastLoadedWarmFirst);
    this.outcomes = new Outcomes(this.core, (group) => {
      for (const l of this.groupListeners) this.events.guarded("group.finished", () => l.groupFinished?.(group));
    });
    this.presence = new NodePresence(this.core, this.outcomes);
    this.identities = new PeerIdentities(repo, (write) => this.persist(write));
    this.acks = new GroupCommit(
      (write) => this.persist(write),
      (batch) => repo.ack(batch, this.now()),
    );
  }

  // ---- read-only views (routes, handlers) ---------------------------------------------------

  get policyVersion(): number {
    return this.version;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Running groups by id. */
  get groups(): ReadonlyMap<string, GroupState> {
    return this.running;
  }

  /** Known nodes (connected, draining, or disconnected within their grace). */
  get nodes(): { get(id: string): Readonly<NodeState> | undefined; values(): IterableIterator<Readonly<NodeState>> } {
    return this.nodeBook;
  }

  /** Unfinished rollouts (queued or assigned). */
  get active(): { get(id: string): Readonly<LiveRollout> | undefined; values(): IterableIterator<Readonly<LiveRollout>>; readonly size: number } {
    return this.rolloutBook;
  }

  get queue(): Pick<RolloutQueue, "size" | "demandByImage"> {
    return this.rolloutBook.queue;
  }

  /** For the rollout API routes (they read the finished group); new listeners use `events.on("group.finished", …)`. */
  on(listener: GroupListener): void {
    this.groupListeners.push(listener);
  }

  /** Null while the store takes writes; otherwise why it does not (its writes are being retried). */
  get storeFailure(): StoreFailure | null {
    return this.store.failing;
  }

  /** Why no new group is taken right now (the store cannot write), or null. */
  submitRefusal(): string | null {
    const failing = this.store.failing;
    return failing ? `the coordinator's store cannot write (${failing.description}); no group is taken until it can` : null;
  }

  /** Runs store writes one after another, in the order decisions were made; one the store refuses is retried until it takes it. */
  persist<T>(write: () => Promise<T>): Promise<T> {
    const next = this.chain.then(() => this.store.run(write));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Reloads what a previous life left (see restore.ts), then dispatches. */
  async restore(): Promise<void> {
    this.version = Number((await this.repo.getMeta("policy_version")) ?? 0);
    this.seq = await this.repo.maxSeq();
    this.taskStats.load(await this.repo.loadTaskStats());
    await restoreFromStore(this.core, this.outcomes);
  }

  // ---- groups -----------------------------------------------------------------------------------

  /** Accepts a group: stored with its rollouts before anyone hears of it, then queued. */
  async submitGroup(args: Omit<NewGroup, "chain">): Promise<GroupState> {
    const refusal = this.submitRefusal();
    if (refusal) throw new PolarError("overloaded", refusal);
    const now = this.now();
    const planned = planGroup(args, this.core.mint, now);
    await this.persist(() => this.repo.insertGroup(planned.row, planned.rollouts, planned.sampling));
    admitGroup(this.core, planned, now);
    return planned.state;
  }

  /** Cancels every unfinished member; the group ends `cancelled`. */
  cancelGroup(group: GroupState, cause: string): Promise<void> {
    return this.outcomes.cancelGroup(group, cause);
  }

  /** Removes a group and everything of it (admin delete); false when there is no such group. */
  deleteGroup(groupId: string): Promise<boolean> {
    return this.outcomes.deleteGroup(groupId);
  }

  // ---- nodes ------------------------------------------------------------------------------------

  /** A node's handshake: null when it must be refused (it was sent an error frame). */
  nodeHello(peer: NodePeer, hello: NodeHello, issuedSecret?: string): NodeState | null {
    return this.presence.hello(peer, hello, issuedSecret);
  }

  /** Any frame from the node. */
  nodeHeard(node: NodeState): void {
    this.nodeBook.heard(node);
  }

  nodeHeartbeat(node: NodeState, load: StageLoad, imagesWarm: Record<string, number>, gateway: GatewayLatency | undefined): void {
    this.nodeBook.recordHeartbeat(node, load, imagesWarm, gateway);
    this.events.emit("node.heartbeat", {
      node_id: node.id,
      load,
      images_warm: [...node.warm],
      warm_sandboxes: imagesWarm,
      gateway: gateway ?? null,
      assigned: node.assigned.size,
      slots: slots(node.capacity),
      at: this.now(),
    });
  }

  /** The node reports the stage its run of a rollout reached. */
  nodeProgress(node: NodeState, rolloutId: string, attempt: number, stage: NodeRolloutState): void {
    const rollout = this.rolloutBook.get(rolloutId);
    if (rollout && rollout.nodeId === node.id && rollout.attempt === attempt) this.rolloutBook.setStage(rollout, stage);
  }

  /** A node's result; resolves once the node may forget it. */
  acceptResult(nodeId: string, rolloutId: string, attempt: number, result: PackedResult): Promise<"accepted" | "dropped"> {
    return this.outcomes.acceptResult(nodeId, rolloutId, attempt, result);
  }

  /** The node's connection closed or went silent: its rollouts wait `nodeGraceMs` for it. */
  nodeDisconnected(node: NodeState, cause: string): void {
    this.presence.disconnected(node, cause);
  }

  /** Connected nodes last heard before `since`. */
  silentNodes(since: number): NodeState[] {
    return [...this.nodeBook.values()].filter((n) => n.peer !== null && n.lastSeen < since);
  }

  /** Operator: the node finishes what it runs and takes no new work. */
  drainNode(nodeId: string): NodeState | undefined {
    const node = this.nodeBook.get(nodeId);
    if (!node) return undefined;
    if (node.state === "connected") this.nodeBook.move(node, { to: "draining", cause: "operator" });
    node.peer?.send({ type: "drain" });
    return node;
  }

  // ---- policy versions and pause ---------------------------------------------------------------

  /** Moves the policy version forward (never back: a conflict; at most `maxPolicyStep` at once); stale rollouts follow `staleAction`. */
  async advancePolicyVersion(version: number): Promise<void> {
    if (!Number.isSafeInteger(version) || version < 0) throw new PolarError("bad_request", `policy version ${version} is not a non-negative safe integer`);
    if (version < this.version) throw new PolarError("conflict", `policy version ${version} is older than the current ${this.version}`);
    const step = this.config.maxPolicyStep;
    if (version - this.version > step)
      throw new PolarError("bad_request", `policy version ${version} is more than max_policy_step (${step}) ahead of the current ${this.version}`);
    if (version === this.version) return;
    const from = this.version;
    this.version = version;
    await this.persist(() => this.repo.setMeta("policy_version", String(version)));
    const staleCancelled = await cancelStale(this.core, this.outcomes, this.presence, version);
    this.events.emit("policy.version_advanced", { from, to: version, stale_cancelled: staleCancelled, at: this.now() });
  }

  /** The cluster pauses (nodes reconnecting meanwhile are paused too); `nodes` were asked. */
  pauseRequested(requestId: string, nodes: number): void {
    this.paused = true;
    this.events.emit("cluster.pause_requested", { request_id: requestId, nodes, at: this.now() });
  }

  pauseDrained(requestId: string, nodes: number): void {
    this.events.emit("cluster.paused", { request_id: requestId, nodes, at: this.now() });
  }

  /** Resumes at `version` (moved forward first; a conflict when older). */
  async resume(version: number): Promise<void> {
    await this.advancePolicyVersion(version);
    this.paused = false;
    for (const node of this.nodeBook.values()) node.peer?.send({ type: "resume", policy_version: this.version });
    this.events.emit("cluster.resumed", { policy_version: this.version, at: this.now() });
  }

  // ---- trainer streams -----------------------------------------------------------------------

  /** A result frame went out to a trainer. */
  resultDelivered(trainerId: string, resultId: string, bytes: number): void {
    this.events.emit("result.delivered", { result_id: resultId, trainer_id: trainerId, bytes, at: this.now() });
  }

  /** A trainer's acknowledgements, written in batches; resolves once durable. */
  async acknowledge(trainerId: string, ids: string[]): Promise<void> {
    await this.acks.add({ trainerId, ids });
    this.events.emit("result.acked", { trainer_id: trainerId, result_ids: ids, at: this.now() });
  }

  /** Results ready for a trainer's stream (listens on `result.ready`). */
  onResultReady(listener: (trainerId: string, result: OutgoingResult) => void): void {
    this.events.on("result.ready", (e) => listener(e.trainer_id, { result: e.result, traces: e.traces }));
  }

  /** Waits for every store write issued so far (tests, shutdown). */
  async settled(): Promise<void> {
    await this.chain;
  }

  stop(): void {
    this.nodeBook.stop();
    this.store.stop();
  }
}
