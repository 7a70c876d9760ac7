// Why: a sandbox keeps a few readers (see reader-job.ts) started ahead of its next commands, so
// a hand-out does not pay for starting one. Used readers are replaced only once the sandbox is
// idle: starting one beside a running command (a runc exec, a new bwrap) slowed that command
// down 5–10× on a busy host. Both runtimes keep their readers this way.
import { PolarError } from "../../protocol/errors.ts";

/** How long a sandbox must stay idle before its used readers are replaced. */
export const REARM_IDLE_MS = 100;

export interface ReaderKit<R> {
  /** Starts a reader; resolves once it is ready for a job (or has failed: `usable` then says so). */
  start(): Promise<R>;
  /** False for a reader that ended before its job (killed from outside, sandbox gone). */
  usable(reader: R): boolean;
  /** Ends a reader that will not be used. */
  discard(reader: R): void;
}

interface Armed<R> {
  ready: Promise<R>;
  /** Set once started: the reader, or null when its start failed. */
  settled?: R | null;
}

export class ReaderStandby<R> {
  private readonly armed: Armed<R>[] = [];
  private running = 0;
  private closed = false;
  private rearmTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly size: number,
    private readonly kit: ReaderKit<R>,
  ) {}

  /**
   * Drops armed readers that ended (killed from outside) or failed to start, then starts readers
   * up to the standby size while the sandbox is idle; resolves once they are ready.
   */
  arm(): Promise<void> {
    const ended = (a: Armed<R>) => a.settled === null || (a.settled !== undefined && !this.kit.usable(a.settled));
    for (let i = this.armed.length - 1; i >= 0; i--) if (ended(this.armed[i]!)) this.armed.splice(i, 1);
    const started: Promise<unknown>[] = [];
    while (!this.closed && this.running === 0 && this.armed.length < this.size) {
      const armed: Armed<R> = { ready: this.start() };
      // A failure surfaces at the command that takes this reader (it then starts another).
      armed.ready.then(
        (reader) => (armed.settled = reader),
        () => (armed.settled = null),
      );
      this.armed.push(armed);
      started.push(armed.ready.catch(() => undefined));
    }
    return Promise.all(started).then(() => undefined);
  }

  /** Runs one command on an armed reader (or one started now when none is usable). */
  async use<T>(run: (reader: R) => Promise<T>): Promise<T> {
    this.running++;
    clearTimeout(this.rearmTimer);
    try {
      return await run(await this.take());
    } finally {
      if (--this.running === 0 && !this.closed) this.rearmTimer = setTimeout(() => void this.arm(), REARM_IDLE_MS);
    }
  }

  private async take(): Promise<R> {
    const armed = this.armed.shift();
    const ready = armed ? await armed.ready.catch(() => undefined) : undefined;
    if (this.closed) {
      if (ready !== undefined) this.kit.discard(ready);
      throw new PolarError("not_found", "the sandbox is destroyed");
    }
    if (ready !== undefined && this.kit.usable(ready)) return ready;
    return this.start();
  }

  /** kit.start, its synchronous failures (a spawn in a removed folder) as a rejection. */
  private start(): Promise<R> {
    try {
      return this.kit.start();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Stops re-arming, discards the armed readers and refuses further commands. */
  close(): void {
    this.closed = true;
    clearTimeout(this.rearmTimer);
    for (const armed of this.armed.splice(0))
      void armed.ready.then(
        (r) => this.kit.discard(r),
        () => undefined,
      );
  }
}
