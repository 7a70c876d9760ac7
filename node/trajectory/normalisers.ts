// Why: chat templates re-render history differently from what the model sampled in a few known,
// declared ways. Each normaliser maps a decoded chunk of text to a form where that one asymmetry
// is erased; a divergence between an open trace and a new prompt is "explained" when applying
// the normalisers to both sides makes them equal. Kept text-level and template-specific
// (Qwen3 / ChatML conventions) in this one file.
import type { NormalisationKind } from "../../protocol/trace.ts";

/** Text a Claude Code system prompt changes on every turn (`cc_version=…; cch=…;`). */
export const DEFAULT_VOLATILE_PATTERNS: readonly RegExp[] = [/x-anthropic-billing-header:[^\n]*/g];

type TextNormaliser = (text: string) => string;

const EMPTY_THINK = /<think>\s*<\/think>\s*/g;
// A reasoning block, possibly unterminated when the output was cut by max tokens.
const THINK_BLOCK = /<think>[\s\S]*?(?:<\/think>|$)/g;
// Whitespace opening an assistant message: what is left of `</think>\n\n` after the block goes
// (engines differ: vLLM keeps it in the content, so history renders `assistant\n\n\n…`).
const ASSISTANT_LEADING_SPACE = /(<\|im_start\|>assistant\n)\s+/g;
const TOOL_CALL = /\s*<tool_call>([\s\S]*?)<\/tool_call>/g;
const VOLATILE_PLACEHOLDER = "\u0000volatile\u0000";

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)]));
  }
  return value;
}

/** `{"name": …, "arguments": …}` in a canonical serialisation (sorted keys, no spaces). */
function canonicalToolCall(body: string): string {
  try {
    return JSON.stringify(sortedKeys(JSON.parse(body)));
  } catch {
    return body.trim();
  }
}

export function globalRegex(pattern: RegExp | string): RegExp {
  if (typeof pattern === "string") return new RegExp(pattern, "g");
  return pattern.flags.includes("g") ? pattern : new RegExp(pattern.source, `${pattern.flags}g`);
}

/** The text normalisers in the order they are applied (tokenization drift needs none). */
export function textNormalisers(
  volatilePatterns: readonly (RegExp | string)[],
): ReadonlyArray<readonly [Exclude<NormalisationKind, "tokenization-drift">, TextNormaliser]> {
  const volatile = volatilePatterns.map(globalRegex);
  return [
    ["generation-glue", (t) => t.replace(EMPTY_THINK, "")],
    ["thinking-strip", (t) => t.replace(THINK_BLOCK, "").replace(ASSISTANT_LEADING_SPACE, "$1")],
    ["volatile-text", (t) => volatile.reduce((acc, re) => acc.replace(re, VOLATILE_PLACEHOLDER), t)],
    ["tool-args-drift", (t) => t.replace(TOOL_CALL, (_m, body: string) => `<tool_call>${canonicalToolCall(body)}</tool_call>`)],
  ];
}

export type TextNormalisers = ReturnType<typeof textNormalisers>;

/**
 * The smallest set of allowed asymmetries that makes `traceText` (what the trace holds) and
 * `promptText` (how the new prompt renders the same place) equal, or null when none does.
 * Equal text with different token ids is tokenization drift.
 */
export function explainDivergence(
  traceText: string,
  promptText: string,
  normalisers: TextNormalisers,
  allowed: ReadonlySet<NormalisationKind>,
): NormalisationKind[] | null {
  if (traceText === promptText) return allowed.has("tokenization-drift") ? ["tokenization-drift"] : null;
  const usable = normalisers.filter(([kind]) => allowed.has(kind));
  const equalUnder = (set: typeof usable) => {
    const norm = (t: string) => set.reduce((acc, [, f]) => f(acc), t);
    return norm(traceText) === norm(promptText);
  };
  if (!equalUnder(usable)) return null;
  const needed = usable.filter((n) => !equalUnder(usable.filter((m) => m !== n)));
  if (needed.length > 0) return needed.map(([kind]) => kind);
  // Several normalisers explain it on their own: name the first one that changes anything.
  const first = usable.find(([, f]) => f(traceText) !== traceText || f(promptText) !== promptText);
  return first ? [first[0]] : null;
}
