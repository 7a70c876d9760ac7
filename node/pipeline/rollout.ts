// Why: one rollout's live record (what it holds, when it entered each stage) and the one
// function that changes its state: checked against the transition table, stored, then announced
// (a listener that throws is reported and cannot fail the move).
import { EventBus, type ListenerErrorSink } from "../../lib/events.ts";
import type { SessionTimingInput, TaskRequest } from "../../protocol/rollout.ts";
import type { Strategy, TrajectoryResult } from "../../protocol/trace.ts";
import { PolarError } from "../../protocol/errors.ts";
import type { HarnessKind } from "../harness/registry.ts";
import type { Sandbox } from "../runtime/types.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import type { GatewaySession, HarnessRunOutcome } from "./ports.ts";
import { asRolloutFailure } from "./result.ts";
import { canTransition, type RolloutState } from "./states.ts";

/** Why a rollout was stopped from outside its own work. */
export type StopReason = "cancelled" | "early_stop" | "task_timeout" | "shutdown";

/** Moments (performance.now()) a rollout reached; the stage timings are differences of these. */
export interface RolloutMarks {
  queued: number;
  init?: number;
  ready?: number;
  run?: number;
  postrunQueued?: number;
  postrun?: number;
  done?: number;
}

export interface Rollout {
  readonly id: string;
  readonly taskId: string;
  readonly sampleIndex: number;
  readonly request: TaskRequest;
  readonly harness: HarnessKind;
  readonly strategy: Strategy;
  state: RolloutState;
  /** Number of the next stored event. */
  nextSeq: number;
  /** Aborted on cancellation, early stop and the task timeout; every stage listens to it. */
  readonly abort: AbortController;
  stopReason?: StopReason;
  marks: RolloutMarks;
  /** Durations measured inside stages, in Polar's SessionTiming names. */
  timing: SessionTimingInput;
  sandbox?: Sandbox;
  session?: GatewaySession;
  outcome?: HarnessRunOutcome;
  agentTimedOut?: boolean;
  /** The rebuilt trajectory, once POSTRUN built it (a later failure reuses it rather than rebuild). */
  trajectory?: TrajectoryResult;
}

export function newRollout(init: Pick<Rollout, "id" | "taskId" | "sampleIndex" | "request" | "harness" | "strategy">): Rollout {
  return { ...init, state: "QUEUED", nextSeq: 1, abort: new AbortController(), marks: { queued: performance.now() }, timing: {} };
}

export type RolloutListener = (rollout: Rollout, from: RolloutState) => void;

const MARK_OF: Partial<Record<RolloutState, keyof RolloutMarks>> = { INIT: "init", READY: "ready", RUN: "run", POSTRUN: "postrun" };

/** The rollout state machine's only mover: validates, stores the event, then tells listeners. */
export class RolloutTransitions {
  private readonly moved: EventBus<{ transition: { rollout: Rollout; from: RolloutState } }>;

  constructor(
    private readonly store: RolloutsRepo,
    onListenerError?: ListenerErrorSink,
    /** Told when a transition could not be stored (the move still happens and is announced, then fails the rollout). */
    private readonly onStoreError?: (err: unknown, rollout: Rollout) => void,
  ) {
    this.moved = new EventBus(onListenerError);
  }

  onTransition(listener: RolloutListener): () => void {
    return this.moved.on("transition", ({ rollout, from }) => listener(rollout, from));
  }

  async move(rollout: Rollout, to: RolloutState, detail?: Record<string, unknown>): Promise<void> {
    const from = rollout.state;
    if (!canTransition(from, to)) throw new PolarError("internal", `rollout ${rollout.id}: no transition ${from} → ${to}`);
    rollout.state = to;
    const mark = MARK_OF[to];
    if (mark) rollout.marks[mark] = performance.now();
    const seq = rollout.nextSeq++;
    try {
      await this.store.recordTransition(rollout.id, seq, from, to, new Date().toISOString(), detail);
    } catch (err) {
      this.onStoreError?.(err, rollout);
      this.moved.emit("transition", { rollout, from });
      throw asRolloutFailure(err, "store");
    }
    this.moved.emit("transition", { rollout, from });
  }
}
