// Why: each pipeline stage has its own concurrency limit; a gate admits waiting rollouts in
// priority order (FIFO within a priority) while its admission rule allows, and a waiter that is
// aborted leaves the queue at once.
import { PriorityQueue } from "./priority-queue.ts";

interface Waiter<T> {
  item: T;
  resolve(): void;
  reject(reason: unknown): void;
}

export class StageGate<T> {
  active = 0;
  private readonly queue = new PriorityQueue<Waiter<T>>();

  /** `canAdmit(active)` is asked before each admission (limits may depend on other stages). */
  constructor(private readonly canAdmit: (active: number) => boolean) {}

  get waiting(): number {
    return this.queue.size;
  }

  waitingItems(): T[] {
    return this.queue.values().map((w) => w.item);
  }

  /** Resolves once admitted (the caller then holds a slot until release()). */
  acquire(item: T, priority: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        if (this.queue.remove(waiter)) reject(signal.reason);
      };
      const waiter: Waiter<T> = {
        item,
        resolve: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter, priority);
    });
  }

  release(): void {
    this.active--;
  }

  /** Admits waiters while the rule allows; returns how many were admitted. */
  pump(): number {
    let admitted = 0;
    while (this.queue.size > 0 && this.canAdmit(this.active)) {
      const waiter = this.queue.shift()!;
      this.active++;
      admitted++;
      waiter.resolve();
    }
    return admitted;
  }
}
