// Why: JSON.parse, zod, the dialects and JSON.stringify all recurse per nesting level, so a body
// nested ~50,000 deep blocks the event loop for seconds and then overflows the stack. Measuring
// the depth first, without parsing, lets a service refuse such a body before doing any work.

const QUOTE = 34; // "
const BACKSLASH = 92; // \
const OPEN_BRACE = 123; // {
const OPEN_BRACKET = 91; // [
const CLOSE_BRACE = 125; // }
const CLOSE_BRACKET = 93; // ]

/**
 * Whether the JSON text nests objects/arrays deeper than `maxDepth` (`{}` is depth 1). Brackets
 * inside strings are skipped (the string's end found with `indexOf`, escapes honoured), so a
 * 100 KB body of mostly string content costs a few microseconds. Malformed text is not judged
 * here: JSON.parse reports it.
 */
export function exceedsJsonDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return false;
    } else if (ch === OPEN_BRACE || ch === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (ch === CLOSE_BRACE || ch === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote closing the string that opens at `open`, or -1 when it never closes. */
function stringEnd(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
