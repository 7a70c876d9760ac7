// Why: the gateway serves rebuilt trajectories of a session on demand; this joins the call store
// to the rebuilding strategies and runs the rebuild in a worker (started on first use) so it
// never stalls the gateway's live calls. The session's calls are read once per rebuild.
import type { SessionTrajectory } from "../../protocol/sessions.ts";
import { PolarError } from "../../protocol/errors.ts";
import type { CallsRepo } from "../store/calls-repo.ts";
import type { RebuildOptions, Strategy, TrajectoryResult } from "../trajectory/index.ts";
import type { RebuildJob, RebuildReply } from "./trajectory-worker.ts";

interface Pending {
  resolve(result: TrajectoryResult): void;
  reject(error: Error): void;
}

export class TrajectoryService {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(
    private readonly calls: CallsRepo,
    private readonly tokenizerFolder?: string,
  ) {}

  async rebuild(sessionId: string, strategy: Strategy, options: Pick<RebuildOptions, "maxContextDrift"> = {}): Promise<SessionTrajectory> {
    const calls = await this.calls.list(sessionId);
    const result = await this.run({ id: this.nextId++, calls, strategy, options, tokenizerFolder: this.tokenizerFolder });
    return { session_id: sessionId, ...result };
  }

  /** Stops the worker (a later rebuild starts a new one); rebuilds still waiting fail. */
  close(): void {
    this.worker?.terminate();
    this.worker = undefined;
    this.failAll(new PolarError("internal", "the gateway is stopping"));
  }

  private run(job: RebuildJob): Promise<TrajectoryResult> {
    return new Promise((resolve, reject) => {
      this.pending.set(job.id, { resolve, reject });
      this.started().postMessage(job);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./trajectory-worker.ts", import.meta.url).href);
    worker.unref(); // an idle worker must not keep the process alive
    worker.onmessage = (event: MessageEvent<RebuildReply>) => {
      const reply = event.data;
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ("error" in reply) waiting?.reject(new PolarError("internal", `trajectory rebuild failed: ${reply.error}`));
      else waiting?.resolve(reply.result);
    };
    worker.onerror = (event) => {
      // The worker died: fail what it held and start a fresh one on the next rebuild.
      this.worker = undefined;
      this.failAll(new PolarError("internal", `trajectory worker crashed: ${event.message}`));
    };
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}
