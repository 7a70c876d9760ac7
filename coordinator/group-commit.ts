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
      if (this.waiting.length === 1) this.scheduleFlush();
    });
  }

  /**
   * The write keeps its place in the chain but waits one turn of the event loop first, so that
   * items whose frames were already received join it (a batch of many, not many batches of one).
   * Items join a write only ever earlier than they would have otherwise, never later. The batch is
   * taken once: the chain may run the write again (a store that refused it, store-guard.ts), and
   * its items learn the outcome only when the chain is done with it.
   */
  private scheduleFlush(): void {
    let batch: Waiting<T>[] | null = null;
    const write = async () => {
      if (!batch) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        batch = this.waiting;
        this.waiting = [];
      }
      await this.write(batch.map((w) => w.item));
    };
    this.schedule(write).then(
      () => {
        for (const w of batch!) w.resolve();
      },
      (err: unknown) => {
        const failed = batch ?? this.waiting.splice(0);
        for (const w of failed) w.reject(err);
      },
    );
  }
}
