// Why: re-tokenizing an earlier assistant turn's rendered text need not give back the ids the
// model actually sampled (BPE is not unique), and then the next prompt no longer extends the
// previous prompt + sample token for token. Splicing the sampled ids back in place of the
// re-rendered text keeps every prompt an exact extension, so prefix-merge trajectories hold.
//
// Per session we remember, for each sampled assistant turn, the text its ids decode to (special
// tokens kept, e.g. a trailing `<|im_end|>`) and the ids. When a later prompt is rendered, each
// earlier assistant message is looked up by what the client sends back (content + tool calls) and
// its text is searched in the rendered prompt after the previous splice point. Found: those
// characters become the sampled ids. Not found (the template re-rendered the turn differently,
// e.g. Qwen3 drops `<think>` of turns before the last user message, or the client changed the
// message): the turn is tokenized from text and counted as missed.
import { heapBytes, type CacheBudget } from "../../cache-budget.ts";
import { LruMap } from "../../lru-map.ts";
import type { PivotMessage } from "../pivot.ts";

export interface SampledTurn {
  /** Decoded sampled ids, special tokens included. */
  text: string;
  ids: number[];
  /** Re-tokenizing `text` gives other ids than were sampled (computed once, when remembered). */
  drifted: boolean;
}

export interface SpliceStats {
  /** Earlier assistant turns whose sampled ids were used verbatim. */
  used: number;
  /** Earlier assistant turns tokenized from text (unknown turn or text not found in the prompt). */
  missed: number;
  /** Spliced turns whose sampled ids differ from re-tokenizing their text (where splicing mattered). */
  drift: number;
}

export interface SplicedPrompt {
  ids: number[];
  stats: SpliceStats;
}

type Encode = (text: string) => number[];

/**
 * Identity of an assistant turn as the client sends it back. Call ids and reasoning are left out
 * (dialects regenerate ids, harnesses drop reasoning), content is trimmed and arguments compared
 * as JSON values (dialects re-serialise them with different spacing).
 */
export function assistantTurnKey(message: Pick<PivotMessage, "content" | "tool_calls">): string {
  return JSON.stringify([message.content.trim(), (message.tool_calls ?? []).map((c) => [c.name, canonicalJson(c.arguments)])]);
}

function canonicalJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** A session's remembered turns and their estimated bytes (kept as turns are added). */
interface SessionTurns {
  byKey: Map<string, SampledTurn[]>;
  bytes: number;
}

export class TokenSpliceCache {
  /** sessionId → turn key → sampled turns (newest last); the least recently used session goes first. */
  private readonly sessions: LruMap<string, SessionTurns>;

  constructor(maxSessions: number) {
    this.sessions = new LruMap(maxSessions, (turns, sessionId) => turns.bytes + heapBytes.string(sessionId));
  }

  /** Counts the remembered turns against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.sessions.shareBudget(budget);
  }

  /** Remembers a sampled turn; `encode` re-tokenizes its text once, to know whether splicing it matters. */
  remember(sessionId: string, message: Pick<PivotMessage, "content" | "tool_calls">, sampled: Pick<SampledTurn, "text" | "ids">, encode: Encode): void {
    const turns = this.sessions.get(sessionId) ?? { byKey: new Map(), bytes: heapBytes.entry };
    const key = assistantTurnKey(message);
    const turn: SampledTurn = { ...sampled, drifted: !sameIds(encode(sampled.text), sampled.ids) };
    const earlier = turns.byKey.get(key);
    turns.byKey.set(key, [...(earlier ?? []), turn]);
    turns.bytes += (earlier ? 0 : heapBytes.string(key)) + heapBytes.string(turn.text) + heapBytes.numbers(turn.ids) + heapBytes.entry;
    // Set again (not only mutated) so the budget re-measures the grown entry.
    this.sessions.set(sessionId, turns);
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Prompt ids of `promptText` with the sampled ids of the session's earlier assistant turns spliced in. */
  splice(sessionId: string, messages: readonly PivotMessage[], promptText: string, encode: Encode): SplicedPrompt {
    const turns = this.sessions.get(sessionId);
    const stats: SpliceStats = { used: 0, missed: 0, drift: 0 };
    const ids: number[] = [];
    let cursor = 0;
    for (const message of messages) {
      if (message.role !== "assistant") continue;
      const found = findTurn(turns?.byKey.get(assistantTurnKey(message)), promptText, cursor);
      if (!found) {
        stats.missed += 1;
        continue;
      }
      ids.push(...encode(promptText.slice(cursor, found.at)), ...found.turn.ids);
      cursor = found.at + found.turn.text.length;
      stats.used += 1;
      if (found.turn.drifted) stats.drift += 1;
    }
    ids.push(...encode(promptText.slice(cursor)));
    return { ids, stats };
  }
}

/** The earliest occurrence after `from` of any remembered sampling of this turn (newest wins ties). */
function findTurn(candidates: SampledTurn[] | undefined, text: string, from: number): { turn: SampledTurn; at: number } | undefined {
  let best: { turn: SampledTurn; at: number } | undefined;
  for (const turn of [...(candidates ?? [])].reverse()) {
    if (turn.text === "") continue;
    const at = text.indexOf(turn.text, from);
    if (at !== -1 && (best === undefined || at < best.at)) best = { turn, at };
  }
  return best;
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
