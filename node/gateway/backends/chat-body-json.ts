// Why: an agent re-sends its whole conversation on every call, and serialising it for the engine
// is the gateway's costliest step after parsing (JSON-escaping 100 KB of code with a newline every
// line costs ~6× a plain copy). Messages unchanged since the session's previous call keep the JSON
// they had then; only new messages are serialised. Held JSON is bounded in bytes across sessions.
import { sameJson } from "../../store/same-json.ts";
import type { PivotMessage } from "../pivot.ts";

/** Default bound on the JSON held for all sessions together (least recently used sessions go first). */
export const DEFAULT_MESSAGE_JSON_BYTES = 64 * 1024 * 1024;

interface Held {
  messages: readonly PivotMessage[];
  json: string[];
  bytes: number;
}

export class ChatBodyJson {
  /** Per session, newest last (Map order = least recently used first). */
  private readonly sessions = new Map<string, Held>();
  private heldBytes = 0;

  constructor(private readonly budgetBytes = DEFAULT_MESSAGE_JSON_BYTES) {}

  /**
   * The engine body as JSON: `rest` (everything but the messages) with `"messages"` holding
   * `wire`, the engine-format messages converted from `pivot` one to one. A message whose pivot
   * equals the one at the same place in the session's previous call reuses that call's JSON.
   */
  serialize(sessionId: string, pivot: readonly PivotMessage[], wire: readonly unknown[], rest: Record<string, unknown>): string {
    const previous = this.sessions.get(sessionId);
    const json: string[] = new Array(wire.length);
    let bytes = 0;
    let reusable = previous !== undefined;
    for (let i = 0; i < wire.length; i++) {
      reusable &&= i < previous!.messages.length && sameJson(pivot[i], previous!.messages[i]);
      json[i] = reusable ? previous!.json[i]! : JSON.stringify(wire[i]);
      bytes += json[i]!.length;
    }
    this.hold(sessionId, { messages: pivot, json, bytes });
    const others = JSON.stringify(rest);
    return `{"messages":[${json.join(",")}]${others === "{}" ? "}" : `,${others.slice(1)}`}`;
  }

  forget(sessionId: string): void {
    const held = this.sessions.get(sessionId);
    if (!held) return;
    this.sessions.delete(sessionId);
    this.heldBytes -= held.bytes;
  }

  private hold(sessionId: string, held: Held): void {
    this.forget(sessionId);
    if (held.bytes > this.budgetBytes) return;
    this.sessions.set(sessionId, held);
    this.heldBytes += held.bytes;
    for (const [oldest] of this.sessions) {
      if (this.heldBytes <= this.budgetBytes) break;
      this.forget(oldest);
    }
  }
}
