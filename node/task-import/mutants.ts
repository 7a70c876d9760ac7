// Why: the mock engine's solving policy plays a plausible wrong fix in the sessions that fail; for
// an imported exercise there is no hand-written one, so candidates are made by mutating the
// reference solution one operator at a time (comparisons, boolean operators and literals,
// arithmetic, case conversion, off-by-one constants) in code only — never inside strings or comments — and the importer keeps
// the first one the hidden tests really reject.

export interface Mutant {
  /** The mutated file's full text. */
  text: string;
  /** What changed, e.g. `line 12: "<=" → "<"`. */
  description: string;
}

interface Operator {
  pattern: RegExp;
  replace: (match: string) => string;
}

/** Each operator matches one token; lookarounds keep `<=` from matching as `<`, `->` as `>`, `==` inside `!=`. */
const OPERATORS: Operator[] = [
  { pattern: /(?<![=!<>])==(?!=)/g, replace: () => "!=" },
  { pattern: /!=/g, replace: () => "==" },
  { pattern: /(?<![<>=!])<=(?!=)/g, replace: () => "<" },
  { pattern: /(?<![<>=!])>=(?!=)/g, replace: () => ">" },
  { pattern: /(?<![<>=!-])<(?![<=>])/g, replace: () => "<=" },
  { pattern: /(?<![<>=!-])>(?![>=])/g, replace: () => ">=" },
  { pattern: /\bTrue\b/g, replace: () => "False" },
  { pattern: /\bFalse\b/g, replace: () => "True" },
  { pattern: /\band\b/g, replace: () => "or" },
  { pattern: /\bor\b/g, replace: () => "and" },
  { pattern: / \+ /g, replace: () => " - " },
  { pattern: / - /g, replace: () => " + " },
  { pattern: / \* /g, replace: () => " + " },
  { pattern: /\.lower\(\)/g, replace: () => ".upper()" },
  { pattern: /\.upper\(\)/g, replace: () => ".lower()" },
  { pattern: /(?<=[+-] ?)\b1\b(?![.\w])/g, replace: () => "2" },
  { pattern: /(?<![\w.])0(?![.\w])/g, replace: () => "1" },
];

/**
 * For each character of Python source, whether it is code (not in a string literal or a comment).
 * Handles ', ", triple quotes, escapes and `#` comments; prefixes (f, r, b) need no care because
 * the quote that follows them starts the string either way.
 */
export function pythonCodeMask(source: string): boolean[] {
  const mask = new Array<boolean>(source.length).fill(true);
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === "#") {
      while (i < source.length && source[i] !== "\n") mask[i++] = false;
      continue;
    }
    if (ch === "'" || ch === '"') {
      const triple = source.startsWith(ch.repeat(3), i);
      const close = triple ? ch.repeat(3) : ch;
      const start = i;
      i += close.length;
      while (i < source.length && !source.startsWith(close, i)) {
        if (source[i] === "\\") i++;
        else if (!triple && source[i] === "\n") break;
        i++;
      }
      i = Math.min(source.length, i + close.length);
      for (let k = start; k < i; k++) mask[k] = false;
      continue;
    }
    i++;
  }
  return mask;
}

/** Single-operator mutants of `source`, in source order, at most `limit`. */
export function pythonMutants(source: string, limit: number): Mutant[] {
  const mask = pythonCodeMask(source);
  const sites: { at: number; length: number; replacement: string }[] = [];
  for (const op of OPERATORS) {
    for (const match of source.matchAll(op.pattern)) {
      const at = match.index;
      if (mask[at] && mask[at + match[0].length - 1]) sites.push({ at, length: match[0].length, replacement: op.replace(match[0]) });
    }
  }
  sites.sort((a, b) => a.at - b.at);
  // Spread the picks over the whole file: early lines are often imports and constants.
  const step = Math.max(1, sites.length / limit);
  const picked = Array.from({ length: Math.min(limit, sites.length) }, (_, k) => sites[Math.floor(k * step)]!);
  return picked.map((site) => {
    const line = source.slice(0, site.at).split("\n").length;
    return {
      text: source.slice(0, site.at) + site.replacement + source.slice(site.at + site.length),
      description: `line ${line}: "${source.slice(site.at, site.at + site.length)}" → "${site.replacement}"`,
    };
  });
}
