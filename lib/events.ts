// Why: the node and the coordinator announce what happens through a typed event map (event name →
// payload); observers — counters, logs, later /metrics and SSE — attach to it without the code
// that makes the change knowing them. Emitting is guarded: a listener that throws is reported
// and skipped, so an observer can never fail the state change it observes.
import { describeCause } from "../protocol/errors.ts";

export type Listener<P> = (payload: P) => void;

/** Told when a listener threw: the event's name and what was thrown. */
export type ListenerErrorSink = (event: string, err: unknown) => void;

/** Default: one JSON line on stderr naming the event and the error's class, never its text. */
export const logListenerError: ListenerErrorSink = (event, err) => {
  process.stderr.write(
    `${JSON.stringify({ ts: new Date().toISOString(), level: "error", event: "listener.failed", failed_event: event, cause: describeCause(err) })}\n`,
  );
};

export class EventBus<M extends object> {
  private readonly listeners = new Map<keyof M, Set<Listener<never>>>();
  private readonly any = new Set<(name: keyof M, payload: M[keyof M]) => void>();

  constructor(private readonly onListenerError: ListenerErrorSink = logListenerError) {}

  /** Listens to one event; returns the function that stops listening. */
  on<K extends keyof M>(name: K, listener: Listener<M[K]>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => set.delete(listener as Listener<never>);
  }

  /** Listens to every event (logs, SSE); returns the function that stops listening. */
  onAny(listener: <K extends keyof M>(name: K, payload: M[K]) => void): () => void {
    const wrapped = listener as (name: keyof M, payload: M[keyof M]) => void;
    this.any.add(wrapped);
    return () => this.any.delete(wrapped);
  }

  /** Whether anyone listens to `name` (an emitter may skip building a costly payload). */
  has(name: keyof M): boolean {
    return this.any.size > 0 || (this.listeners.get(name)?.size ?? 0) > 0;
  }

  /** Calls every listener of `name`; one that throws is reported and the rest still run. */
  emit<K extends keyof M>(name: K, payload: M[K]): void {
    const set = this.listeners.get(name);
    if (set) for (const listener of set) this.call(name, () => (listener as Listener<M[K]>)(payload));
    for (const listener of this.any) this.call(name, () => listener(name, payload));
  }

  /** Runs `run` for an observer of `name` under the same guard as a listener. */
  guarded(name: keyof M, run: () => void): void {
    this.call(name, run);
  }

  private call(name: keyof M, run: () => void): void {
    try {
      run();
    } catch (err) {
      try {
        this.onListenerError(String(name), err);
      } catch {
        // the error sink itself failed: nothing more can be reported
      }
    }
  }
}
