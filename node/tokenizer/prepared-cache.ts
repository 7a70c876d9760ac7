// Why: building a tokenizer from tokenizer.json (parse 10 MB, validate ~150k vocabulary entries
// and merges, derive tiktoken's rank table) costs 1–2 s idle and 10 s on a loaded machine, and
// every thread that needs it pays again (each trajectory worker, each test process). The derived
// form is kept on disk, keyed by the model files' path, size and mtime, so later loads read it back.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { ModelFolder } from "./model-folder.ts";

/** A model folder with what the BPE encoder is built from. */
export interface PreparedModel {
  folder: ModelFolder;
  /** tiktoken's mergeable ranks: one "base64(bytes) rank" line per token. */
  ranks: string;
}

/** Bumped whenever ModelFolder or the rank format changes, so old cache files are ignored. */
const FORMAT = 1;
const MODEL_FILES = ["tokenizer.json", "tokenizer_config.json"];

/** `POLAR_CACHE_DIR` (default `~/.cache/polar`)/tokenizers. */
export function tokenizerCacheDir(): string {
  return join(process.env.POLAR_CACHE_DIR ?? join(homedir(), ".cache", "polar"), "tokenizers");
}

function cacheKey(folderPath: string): string {
  const stamps = MODEL_FILES.map((f) => {
    const s = statSync(join(folderPath, f));
    return `${f}:${s.size}:${s.mtimeMs}`;
  });
  return createHash("sha256")
    .update(JSON.stringify([FORMAT, folderPath, stamps]))
    .digest("hex")
    .slice(0, 32);
}

/** Our own file: its envelope is checked; the vocabulary was validated when the entry was written. */
const CacheFile = z.object({
  format: z.literal(FORMAT),
  key: z.string(),
  ranks: z.string(),
  folder: z.looseObject({
    path: z.string(),
    vocab: z.custom<Record<string, number>>((v) => typeof v === "object" && v !== null && !Array.isArray(v)),
    pattern: z.string(),
    chatTemplate: z.string(),
  }),
});

/**
 * The prepared model of `folderPath`: from the cache when its entry matches the model files,
 * else built by `build` and stored (a cache that cannot be read or written only costs time).
 */
export function loadPreparedModel(folderPath: string, build: () => PreparedModel): PreparedModel & { fromCache: boolean } {
  let key: string;
  try {
    key = cacheKey(folderPath);
  } catch {
    return { ...build(), fromCache: false };
  }
  const file = join(tokenizerCacheDir(), `${key}.json`);
  try {
    const cached = CacheFile.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (cached.success && cached.data.key === key) return { folder: cached.data.folder as unknown as ModelFolder, ranks: cached.data.ranks, fromCache: true };
  } catch {
    // No entry yet, or an unreadable one: rebuilt below.
  }
  const prepared = build();
  try {
    mkdirSync(tokenizerCacheDir(), { recursive: true });
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(partial, JSON.stringify({ format: FORMAT, key, ranks: prepared.ranks, folder: prepared.folder }));
    renameSync(partial, file);
  } catch {
    // A read-only home or a full disk: the tokenizer still works, it is just built every time.
  }
  return { ...prepared, fromCache: false };
}
