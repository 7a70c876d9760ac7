// Why: many samples of one task often end in the same trajectory (the same reads, the same fix);
// `--dedup T` keeps one of each group of near-identical accepted attempts per task: two are
// near-identical when the Jaccard similarity of their assistant turns' word 3-grams is ≥ T
// (T = 1: identical turns only).

const SHINGLE = 3;

function shingles(text: string): Set<string> {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length < SHINGLE) return new Set([words.join(" ")]);
  const out = new Set<string>();
  for (let i = 0; i + SHINGLE <= words.length; i++) out.add(words.slice(i, i + SHINGLE).join(" "));
  return out;
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const s of a) if (b.has(s)) shared++;
  return shared / (a.size + b.size - shared);
}

export class NearDuplicates {
  private readonly kept = new Map<string, { sample: number; shingles: Set<string> }[]>();

  constructor(readonly threshold: number) {}

  /** The kept sample of `taskId` that `text` nearly repeats, or null. */
  find(taskId: string, text: string): number | null {
    const mine = shingles(text);
    for (const k of this.kept.get(taskId) ?? []) if (jaccard(mine, k.shingles) >= this.threshold) return k.sample;
    return null;
  }

  keep(taskId: string, sample: number, text: string): void {
    this.kept.set(taskId, [...(this.kept.get(taskId) ?? []), { sample, shingles: shingles(text) }]);
  }
}
