// Why: a trainer may cancel a task while its submit is still in flight; the id is remembered for a
// while so the late submit is refused (Polar's cancel tombstones), the same way on every service.
import { CANCELLED_ID_MEMORY_MS } from "./task-status.ts";

export class CancelledIds {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly memoryMs = CANCELLED_ID_MEMORY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  remember(taskId: string): void {
    this.prune();
    this.until.set(taskId, this.now() + this.memoryMs);
  }

  has(taskId: string): boolean {
    this.prune();
    return this.until.has(taskId);
  }

  private prune(): void {
    const now = this.now();
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
  }
}
