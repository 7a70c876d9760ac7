// Why: results flow to a trainer under its credits and stay owed until it acknowledges them;
// this module owns that book per trainer — credits, the ids waiting to be sent, what went out on
// the current connection — and never holds more payload bytes than its cache budget.
import type { CoordinatorToTrainer } from "../protocol/trainer-stream.ts";
import type { OutgoingResult } from "./packed-results.ts";

export interface TrainerPeer {
  /** Returns the frame's size in bytes. */
  send(message: CoordinatorToTrainer): number;
  /** A result frame in the encoding the trainer asked for in its hello; returns its size in bytes. */
  sendResult(out: OutgoingResult): number;
  /** Resolves once the connection can take more (its send buffer drained). */
  drained(): Promise<void>;
  close(code: number, reason: string): void;
}

/** Fresh results by id, dropped oldest-first past a byte budget (the store has them all). */
export class ResultCache {
  private readonly entries = new Map<string, { out: OutgoingResult; bytes: number }>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  /** `bytes`: what it holds in memory (a cheap, close estimate). */
  set(out: OutgoingResult, bytes: number): void {
    if (bytes > this.budget) return;
    this.entries.set(out.result.result_id, { out, bytes });
    this.bytes += bytes;
    for (const [id, entry] of this.entries) {
      if (this.bytes <= this.budget) break;
      this.entries.delete(id);
      this.bytes -= entry.bytes;
    }
  }

  take(id: string): OutgoingResult | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    this.bytes -= entry.bytes;
    return entry.out;
  }

  get heldBytes(): number {
    return this.bytes;
  }
}

export interface TrainerStream {
  id: string;
  peer: TrainerPeer | null;
  credits: number;
  /** Result ids owed and not yet sent on this connection, oldest first. */
  pending: string[];
  pendingHead: number;
  /** Ids in `pending` (a result is queued once). */
  queued: Set<string>;
  /** Sent on this connection and not yet acknowledged. */
  inFlight: Set<string>;
  pumping: boolean;
}

export function newTrainerStream(id: string): TrainerStream {
  return { id, peer: null, credits: 0, pending: [], pendingHead: 0, queued: new Set(), inFlight: new Set(), pumping: false };
}

/** The next `max` pending ids, removed from the queue. */
export function takePending(stream: TrainerStream, max: number): string[] {
  const end = Math.min(stream.pending.length, stream.pendingHead + max);
  const ids = stream.pending.slice(stream.pendingHead, end);
  stream.pendingHead = end;
  if (stream.pendingHead > 4096 && stream.pendingHead * 2 > stream.pending.length) {
    stream.pending = stream.pending.slice(stream.pendingHead);
    stream.pendingHead = 0;
  }
  return ids;
}

export function pendingCount(stream: TrainerStream): number {
  return stream.pending.length - stream.pendingHead;
}
