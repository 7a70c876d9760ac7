import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mergeableRanks } from "./bpe.ts";
import { defaultModelFolderPath, loadModelFolder, type ModelFolder } from "./model-folder.ts";
import { loadPreparedModel, tokenizerCacheDir, type PreparedModel } from "./prepared-cache.ts";

let dir: string;
const savedCacheDir = process.env.POLAR_CACHE_DIR;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "polar-tokcache-"));
  process.env.POLAR_CACHE_DIR = join(dir, "cache");
});
afterEach(() => {
  if (savedCacheDir === undefined) delete process.env.POLAR_CACHE_DIR;
  else process.env.POLAR_CACHE_DIR = savedCacheDir;
  rmSync(dir, { recursive: true, force: true });
});

/** A model folder whose files only need to exist: the cache keys on their size and mtime. */
function fakeModelFolder(): string {
  const folder = join(dir, "model");
  mkdirSync(folder);
  writeFileSync(join(folder, "tokenizer.json"), "{}");
  writeFileSync(join(folder, "tokenizer_config.json"), "{}");
  return folder;
}

function fakePrepared(path: string, tag: string): PreparedModel {
  const folder: ModelFolder = {
    path,
    vocab: { a: 0, b: 1 },
    addedTokens: [],
    pattern: tag,
    nfc: false,
    chatTemplate: "",
    specialTokensMap: {},
    modelMaxLength: undefined,
  };
  return { folder, ranks: "YQ== 0\nYg== 1" };
}

describe("prepared tokenizer cache", () => {
  test("the second load reads the cache; changed model files are rebuilt", () => {
    const folder = fakeModelFolder();
    let builds = 0;
    const build = () => fakePrepared(folder, `build ${++builds}`);

    const first = loadPreparedModel(folder, build);
    expect(first.fromCache).toBe(false);
    expect(readdirSync(tokenizerCacheDir())).toHaveLength(1);
    const second = loadPreparedModel(folder, build);
    expect(second).toEqual({ ...first, fromCache: true });
    expect(builds).toBe(1);

    utimesSync(join(folder, "tokenizer.json"), new Date(), new Date(Date.now() + 60_000));
    const rebuilt = loadPreparedModel(folder, build);
    expect(rebuilt.fromCache).toBe(false);
    expect(rebuilt.folder.pattern).toBe("build 2");
  });

  test("a corrupt cache entry is rebuilt, and an unwritable cache only costs time", () => {
    const folder = fakeModelFolder();
    loadPreparedModel(folder, () => fakePrepared(folder, "first"));
    const [entry] = readdirSync(tokenizerCacheDir());
    writeFileSync(join(tokenizerCacheDir(), entry!), "{not json");
    expect(loadPreparedModel(folder, () => fakePrepared(folder, "again"))).toMatchObject({ fromCache: false, folder: { pattern: "again" } });

    writeFileSync(join(dir, "file"), "");
    process.env.POLAR_CACHE_DIR = join(dir, "file"); // a file where the cache folder should be
    expect(loadPreparedModel(folder, () => fakePrepared(folder, "uncached"))).toMatchObject({ fromCache: false, folder: { pattern: "uncached" } });
  });

  test("the real Qwen3 folder round-trips through the cache exactly", () => {
    const folder = join(dir, "qwen3");
    mkdirSync(folder);
    for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(join(defaultModelFolderPath(), f), join(folder, f));
    const build = () => {
      const model = loadModelFolder(folder);
      return { folder: model, ranks: mergeableRanks(model.vocab) };
    };
    const built = loadPreparedModel(folder, build);
    const cached = loadPreparedModel(folder, build);
    expect(cached.fromCache).toBe(true);
    expect(cached.ranks).toBe(built.ranks);
    expect(cached.folder).toEqual(built.folder);
  }, 120_000);
});
