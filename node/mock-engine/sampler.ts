// Why: the mock "samples" scripted tokens, but trainers and tests need logprobs that look real
// and are reproducible: deterministic pseudo-random negatives per (engine seed, request seed,
// prompt), with top-k alternatives ranked below the sampled token.

export interface TokenLogprob {
  id: number;
  logprob: number;
}

export interface SampledLogprobs {
  /** Logprob of each sampled token (strictly negative). */
  logprobs: number[];
  /** Per position: the top-k candidates, sampled token first. Empty lists when k = 0. */
  top: TokenLogprob[][];
}

/** FNV-1a over 32-bit words: a stable seed from engine seed, request seed and prompt ids. */
export function seedFrom(engineSeed: number, requestSeed: number, promptIds: readonly number[]): number {
  let h = 0x811c9dc5;
  const mix = (word: number) => {
    h ^= word >>> 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  };
  mix(engineSeed);
  mix(Math.floor(requestSeed / 2 ** 32));
  mix(requestSeed);
  for (const id of promptIds) mix(id);
  return h;
}

/** mulberry32: small, fast, good enough for reproducible fake logprobs. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function sampleLogprobs(outputIds: readonly number[], topK: number, seed: number, vocabSize: number): SampledLogprobs {
  const random = prng(seed);
  const logprobs: number[] = [];
  const top: TokenLogprob[][] = [];
  for (const id of outputIds) {
    const u = random();
    const logprob = -(1e-4 + 2.5 * u * u);
    logprobs.push(logprob);
    const candidates: TokenLogprob[] = topK > 0 ? [{ id, logprob }] : [];
    let next = logprob;
    while (candidates.length < topK) {
      next -= 0.5 + 3 * random();
      const alt = Math.floor(random() * vocabSize);
      if (!candidates.some((c) => c.id === alt)) candidates.push({ id: alt, logprob: next });
    }
    top.push(candidates);
  }
  return { logprobs, top };
}
