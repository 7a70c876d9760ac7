// Why: sandbox starts are CPU-bound, so the pool runs only a few at once; a rollout waiting for a
// sandbox right now goes before background refills.
export class StartGate {
  private running = 0;
  private closed = false;
  private readonly urgent: (() => void)[] = [];
  private readonly background: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError("the start gate needs a limit of at least 1");
  }

  /** Resolves with a release function once a start slot is free (at once after close). */
  acquire(urgent: boolean): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.running++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.running--;
          this.next();
        });
      };
      if (this.closed || this.running < this.limit) grant();
      else (urgent ? this.urgent : this.background).push(grant);
    });
  }

  /** Lets every waiter through (the pool refuses their start once closed). */
  close(): void {
    this.closed = true;
    for (const grant of [...this.urgent.splice(0), ...this.background.splice(0)]) grant();
  }

  private next(): void {
    if (this.running >= this.limit) return;
    (this.urgent.shift() ?? this.background.shift())?.();
  }
}
