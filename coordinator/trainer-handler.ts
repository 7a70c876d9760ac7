// Why: what the coordinator does with each frame a trainer sends — submit groups, grant credits,
// acknowledge results, cancel, policy versions, pause/resume — and how owed results are pumped
// to it within its credits (fresh ones from memory, older ones from the store).
import { asPolarError, PolarError, wsErrorFrame } from "../protocol/errors.ts";
import { unknownNames } from "../protocol/harness-names.ts";
import { TRAINER_PROTOCOL_VERSION, type GroupSpec, type TrainerToCoordinator } from "../protocol/trainer-stream.ts";
import type { Coordinator } from "./coordinator.ts";
import { rewardStd } from "./dynamic-sampling.ts";
import { requestForGroup, type AdvantageMode, type GroupSampling } from "./groups.ts";
import type { PauseBook } from "./pauses.ts";
import { refusePeer } from "./peer-identities.ts";
import { heldBytes, outgoingFromRow, type OutgoingResult } from "./packed-results.ts";
import { groupAdvantages } from "./results.ts";
import type { TaskCatalog } from "./task-catalog.ts";
import { newTrainerStream, pendingCount, takePending, type TrainerPeer, type TrainerStream } from "./trainer-streams.ts";

const PUMP_BATCH = 256;

export class TrainerHandler {
  /** Every trainer seen, by id (a stream outlives its connections: what it is owed stays). */
  private readonly trainers = new Map<string, TrainerStream>();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly pauses: PauseBook,
    private readonly tasks: TaskCatalog,
  ) {
    coordinator.onResultReady((trainerId, result) => this.resultReady(trainerId, result));
    coordinator.events.on("group.finished", (e) => {
      const stream = e.trainer_id === null ? undefined : this.trainers.get(e.trainer_id);
      if (stream?.peer) void this.sendGroup(stream, e.group_id);
    });
  }

  /** Every trainer's stream (read-only: metrics and the dashboard). */
  streams(): Iterable<Readonly<TrainerStream>> {
    return this.trainers.values();
  }

  /** The handshake: (re)attaches the trainer's stream and queues every unacknowledged result. */
  async hello(peer: TrainerPeer, message: Extract<TrainerToCoordinator, { type: "hello" }>): Promise<TrainerStream | null> {
    const c = this.coordinator;
    if (message.protocol_version !== TRAINER_PROTOCOL_VERSION) {
      peer.send(
        wsErrorFrame(
          new PolarError("bad_request", `coordinator speaks trainer protocol ${TRAINER_PROTOCOL_VERSION}, trainer sent ${message.protocol_version}`),
        ),
      );
      return null;
    }
    // The trainer proves its id (the secret issued at its first hello) and no other connection holds it.
    const id = message.trainer_id;
    const admitted = await c.identities.admit(
      "trainer",
      id,
      message.trainer_secret,
      () => Boolean(this.trainers.get(id)?.peer),
      (issued) => {
        let stream = this.trainers.get(id);
        if (!stream) this.trainers.set(id, (stream = newTrainerStream(id)));
        Object.assign(stream, { peer, credits: 0, pending: [], pendingHead: 0, inFlight: new Set(), queued: new Set() });
        return { stream, issued };
      },
    );
    if (!admitted.ok) {
      refusePeer(c, peer, "trainer", id, admitted);
      return null;
    }
    const { stream, issued } = admitted.value;
    const unacked = await c.repo.unackedIds(stream.id);
    for (const id of unacked) this.enqueue(stream, id);
    peer.send({
      type: "welcome",
      protocol_version: TRAINER_PROTOCOL_VERSION,
      trainer_id: stream.id,
      policy_version: c.policyVersion,
      unacked: unacked.length,
      encoding: message.encoding,
      ...(issued && { trainer_secret: issued }),
    });
    for (const groupId of await c.repo.finishedGroupsWithUnacked(stream.id)) await this.sendGroup(stream, groupId);
    return stream;
  }

  async message(stream: TrainerStream, message: TrainerToCoordinator): Promise<void> {
    const c = this.coordinator;
    const peer = stream.peer;
    if (!peer) return;
    switch (message.type) {
      case "hello":
        peer.send(wsErrorFrame(new PolarError("bad_request", "hello was already received")));
        return;
      case "submit": {
        const task = typeof message.group.task === "string" ? this.tasks.get(message.group.task) : message.group.task;
        if (!task) {
          peer.send(wsErrorFrame(new PolarError("not_found", `no task "${String(message.group.task)}" in the coordinator's task file`), message.request_id));
          return;
        }
        const spec = message.group;
        const refused = unknownName(spec);
        if (refused) {
          peer.send(wsErrorFrame(new PolarError("bad_request", refused), message.request_id));
          return;
        }
        const sampling = this.samplingOf(spec);
        if (sampling instanceof PolarError) {
          peer.send(wsErrorFrame(sampling, message.request_id));
          return;
        }
        const storeRefusal = c.submitRefusal();
        if (storeRefusal) {
          peer.send(wsErrorFrame(new PolarError("overloaded", storeRefusal), message.request_id));
          return;
        }
        const group = await c.submitGroup({
          trainerId: stream.id,
          taskId: task.task_id,
          request: requestForGroup(spec, task),
          n: spec.n,
          earlyStopMinUsable: spec.early_stop_min_usable ?? null,
          advantages: spec.advantages,
          callbackUrl: null,
          sampling,
        });
        peer.send({ type: "submitted", request_id: message.request_id, group_id: group.id, rollout_ids: group.members });
        return;
      }
      case "credit":
        stream.credits += message.n;
        await this.pump(stream);
        return;
      case "ack":
        for (const id of message.result_ids) stream.inFlight.delete(id);
        await c.acknowledge(stream.id, message.result_ids);
        return;
      case "cancel_group": {
        const group = c.groups.get(message.group_id);
        if (!group || group.trainerId !== stream.id) {
          peer.send(wsErrorFrame(new PolarError("not_found", `no running group ${message.group_id} of this trainer`)));
          return;
        }
        await c.cancelGroup(group, "cancelled by the trainer");
        return;
      }
      case "policy":
        await this.versionMoved(stream, () => c.advancePolicyVersion(message.version));
        return;
      case "pause": {
        const nodes = [...c.nodes.values()].filter((n) => n.peer !== null);
        c.pauseRequested(message.request_id, nodes.length);
        this.pauses.start(message.request_id, nodes, (drained) => {
          c.pauseDrained(message.request_id, drained);
          stream.peer?.send({ type: "paused", request_id: message.request_id, nodes: drained });
        });
        return;
      }
      case "resume":
        if (!(await this.versionMoved(stream, () => c.resume(message.version)))) return;
        peer.send({ type: "resumed", policy_version: c.policyVersion });
        return;
      case "task_stats": {
        const { type: _type, request_id, ...query } = message;
        peer.send({ type: "task_stats", request_id, ...c.taskStats.query(query, () => this.tasks.ids()) });
        return;
      }
    }
  }

  /**
   * What the submit asks of a flat group. A `next_task` list is checked now — every id in the task
   * file, every task buildable into a request — so a replacement never fails for a reason the
   * trainer could have been told at submit.
   */
  private samplingOf(spec: GroupSpec): Pick<GroupSampling, "minRewardStd" | "replaceFlat" | "overlay"> | PolarError {
    const replaceFlat = spec.replace_flat ?? null;
    const overlay = replaceFlat?.source === "next_task" ? { priority: spec.priority, agent: spec.agent, builder: spec.builder, metadata: spec.metadata } : null;
    for (const [i, next] of (replaceFlat?.tasks ?? []).entries()) {
      const task = typeof next === "string" ? this.tasks.get(next) : next;
      if (!task) return new PolarError("not_found", `replace_flat.tasks[${i}]: no task "${String(next)}" in the coordinator's task file`);
      try {
        requestForGroup(overlay!, task);
      } catch (err) {
        return new PolarError("bad_request", `replace_flat.tasks[${i}]: ${asPolarError(err).message}`);
      }
    }
    return { minRewardStd: spec.min_reward_std ?? null, replaceFlat, overlay };
  }

  closed(stream: TrainerStream, peer: TrainerPeer): void {
    if (stream.peer === peer) stream.peer = null;
  }

  /** Runs a version change; a refusal (an older version) is answered with its error frame. */
  private async versionMoved(stream: TrainerStream, change: () => Promise<void>): Promise<boolean> {
    try {
      await change();
      return true;
    } catch (err) {
      const e = asPolarError(err);
      if (e.code !== "conflict") throw err;
      stream.peer?.send(wsErrorFrame(e));
      return false;
    }
  }

  private resultReady(trainerId: string, out: OutgoingResult): void {
    const stream = this.trainers.get(trainerId);
    if (!stream?.peer) return; // owed: sent from the store when the trainer connects
    this.coordinator.cache.set(out, heldBytes(out));
    this.enqueue(stream, out.result.result_id);
    void this.pump(stream);
  }

  private enqueue(stream: TrainerStream, id: string): void {
    if (stream.queued.has(id) || stream.inFlight.has(id)) return;
    stream.queued.add(id);
    stream.pending.push(id);
  }

  /** Sends owed results while credits last; one pump per stream at a time. */
  private async pump(stream: TrainerStream): Promise<void> {
    if (stream.pumping) return;
    stream.pumping = true;
    const c = this.coordinator;
    try {
      while (stream.peer && stream.credits > 0 && pendingCount(stream) > 0) {
        const ids = takePending(stream, Math.min(stream.credits, PUMP_BATCH));
        const found = new Map<string, OutgoingResult>();
        const missing: string[] = [];
        for (const id of ids) {
          const cached = c.cache.take(id);
          if (cached) found.set(id, cached);
          else missing.push(id);
        }
        if (missing.length > 0) for (const row of await c.repo.resultsById(missing)) found.set(row.rolloutId, outgoingFromRow(row));
        for (const id of ids) {
          stream.queued.delete(id);
          const out = found.get(id);
          if (!out || !stream.peer) continue; // pruned, or the trainer left (it is owed again on reconnect)
          await stream.peer.drained();
          if (!stream.peer) continue;
          const bytes = stream.peer.sendResult(out);
          stream.credits--;
          stream.inFlight.add(id);
          c.resultDelivered(stream.id, id, bytes);
        }
      }
    } finally {
      stream.pumping = false;
    }
  }

  /**
   * The finished group's rewards and GRPO advantages (cancelled members have no reward), how it
   * was judged (flat or not) and its replacement links, as stored when it completed.
   */
  private async sendGroup(stream: TrainerStream, groupId: string): Promise<void> {
    const repo = this.coordinator.repo;
    const row = await repo.findGroup(groupId);
    if (!row) return;
    const results = await repo.groupResults(groupId);
    const sampling = await repo.groupSampling(groupId);
    const rewards = results.map((r) => (r.status === "CANCELLED" ? null : r.reward));
    const status = row.state === "cancelled" ? "cancelled" : "completed";
    // A group stored before dynamic sampling existed has no judgement: judged now by the default rule.
    const std = sampling?.flat === null || sampling?.flat === undefined ? rewardStd(rewards) : sampling.rewardStd;
    stream.peer?.send({
      type: "group",
      group_id: groupId,
      status,
      rollout_ids: results.map((r) => r.rolloutId),
      rewards,
      advantages: groupAdvantages(rewards, row.advantages as AdvantageMode),
      task_id: row.taskId,
      reward_std: std,
      flat: sampling?.flat ?? (status === "completed" && std === 0),
      replacement_index: sampling?.replacementIndex ?? 0,
      replaces: sampling?.replaces ?? null,
      replaced_by: sampling?.replacedBy ?? null,
      replacement_exhausted: sampling?.replacementExhausted ?? null,
    });
  }
}

/** Harness and builder names are checked here, not first on a node after dispatch. */
function unknownName(spec: GroupSpec): string | null {
  return unknownNames(spec.agent.harness, spec.builder?.strategy);
}
