// Why: a busy cluster finishes hundreds of rollouts a second and a trainer acknowledges each
// one; writing them one transaction each would make the store the bottleneck. Items that arrive
// while a write is queued or running go into the next single write (group commit), and each
// caller still learns when its own item is durable.

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];

  /**
   * @param schedule runs a write in the owner's ordered write chain
   * @param write stores a batch
   */
  constructor(
    private readonly schedule: (write: () => Promise<void>) => Promise<void>,
    private readonly write: (items: T[]) => Promise<void>,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length === 1) void this.schedule(() => this.flushNextTick()).catch(() => undefined);
    });
  }

  /**
   * The write keeps its place in the chain but waits one turn of the event loop first, so that
   * items whose frames were already received join it (a batch of many, not many batches of one).
   * Items join a write only ever earlier than they would have otherwise, never later.
   */
  private async flushNextTick(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.flush();
  }

  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    try {
      await this.write(batch.map((w) => w.item));
      for (const w of batch) w.resolve();
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
