// Why: merging must stay linear in a session's tokens. Prefix hashes of a token sequence let us
// compare any two ranges in O(1) and find where two sequences diverge in O(log n), so a new
// prompt is compared with each open trace's tail without a token-by-token walk over history.

// Two moduli below 2^26: a hash times a power stays below 2^52, exact in a double.
const MOD_A = 67_108_859;
const MOD_B = 67_108_837;
const BASE_A = 911_382_323 % MOD_A;
const BASE_B = 972_663_749 % MOD_B;

const powA: number[] = [1];
const powB: number[] = [1];

function ensurePowers(n: number): void {
  for (let i = powA.length; i <= n; i++) {
    powA.push((powA[i - 1]! * BASE_A) % MOD_A);
    powB.push((powB[i - 1]! * BASE_B) % MOD_B);
  }
}

/** A token sequence with its prefix hashes (`a[i]`, `b[i]` hash `ids[0..i)`). */
export class HashedTokens {
  private constructor(
    readonly ids: readonly number[],
    private readonly a: Int32Array,
    private readonly b: Int32Array,
  ) {}

  static of(ids: readonly number[]): HashedTokens {
    return HashedTokens.extend(undefined, ids);
  }

  /** `base.ids` followed by `more`, reusing base's hashes (cost: a copy plus `more.length`). */
  static extend(base: HashedTokens | undefined, more: readonly number[]): HashedTokens {
    const baseLen = base?.ids.length ?? 0;
    const n = baseLen + more.length;
    ensurePowers(n);
    const a = new Int32Array(n + 1);
    const b = new Int32Array(n + 1);
    if (base) {
      a.set(base.a);
      b.set(base.b);
    }
    const ids = base ? [...base.ids, ...more] : [...more];
    for (let i = baseLen; i < n; i++) {
      const t = ids[i]! + 1;
      a[i + 1] = (a[i]! * BASE_A + t) % MOD_A;
      b[i + 1] = (b[i]! * BASE_B + t) % MOD_B;
    }
    return new HashedTokens(ids, a, b);
  }

  get length(): number {
    return this.ids.length;
  }

  private rangeA(from: number, to: number): number {
    return (((this.a[to]! - this.a[from]! * powA[to - from]!) % MOD_A) + MOD_A) % MOD_A;
  }

  private rangeB(from: number, to: number): number {
    return (((this.b[to]! - this.b[from]! * powB[to - from]!) % MOD_B) + MOD_B) % MOD_B;
  }

  /** Whether `this.ids[from, from+len)` equals `other.ids[otherFrom, otherFrom+len)` (by hash). */
  rangeEquals(from: number, other: HashedTokens, otherFrom: number, len: number): boolean {
    if (from + len > this.length || otherFrom + len > other.length) return false;
    return (
      this.rangeA(from, from + len) === other.rangeA(otherFrom, otherFrom + len) && this.rangeB(from, from + len) === other.rangeB(otherFrom, otherFrom + len)
    );
  }

  /** Length of the common run starting at `from` here and `otherFrom` in `other` (O(log n)). */
  commonRun(from: number, other: HashedTokens, otherFrom: number): number {
    let lo = 0;
    let hi = Math.min(this.length - from, other.length - otherFrom);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.rangeEquals(from, other, otherFrom, mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
