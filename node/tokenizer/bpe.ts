// Why: exact, fast tokenization of a HuggingFace byte-level BPE model with the tiktoken WASM
// core: the vocabulary becomes tiktoken mergeable ranks, the Split regex its pat_str, and every
// added token a special token recognised inside text (as HF and vLLM do when they tokenize a
// rendered chat template). Encoders are built once per model folder and cached. The WASM core is
// loaded with the first encoder, not on import: instantiated, it holds ~20 MiB, which a gateway
// or node that never tokenizes (the vllm and sglang backends) would carry for nothing.
import type { Tiktoken } from "@dqbd/tiktoken";
import { byteLevelToBytes } from "./byte-level.ts";
import { defaultModelFolderPath, loadModelFolder, type AddedTokenInfo, type ModelFolder } from "./model-folder.ts";
import { loadPreparedModel } from "./prepared-cache.ts";

export interface DecodeOptions {
  /** Drop HF "special" added tokens (e.g. `<|im_end|>`), as vLLM does for output text. */
  skipSpecialTokens?: boolean;
}

export class BpeTokenizer {
  readonly folder: ModelFolder;
  /** Number of ids (regular vocabulary plus added tokens). */
  readonly vocabSize: number;
  readonly eosTokenId: number;
  private readonly encoder: Tiktoken;
  private readonly addedByContent: Map<string, AddedTokenInfo>;
  private readonly specialIds: Set<number>;
  private readonly addedTokenSplitter: RegExp;
  private readonly utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

  /** `ranks`: tiktoken's rank table of `folder.vocab`, when already derived (prepared-cache.ts). */
  constructor(folder: ModelFolder, ranks: string = mergeableRanks(folder.vocab)) {
    this.folder = folder;
    const { Tiktoken } = require("@dqbd/tiktoken") as typeof import("@dqbd/tiktoken");
    this.encoder = new Tiktoken(ranks, specialTokenMap(folder.addedTokens), folder.pattern);
    this.addedByContent = new Map(folder.addedTokens.map((t) => [t.content, t]));
    this.specialIds = new Set(folder.addedTokens.filter((t) => t.special).map((t) => t.id));
    const maxId = Math.max(...Object.values(folder.vocab), ...folder.addedTokens.map((t) => t.id));
    this.vocabSize = maxId + 1;
    const eos = folder.specialTokensMap.eos_token;
    const eosId = eos === null || eos === undefined ? undefined : this.addedByContent.get(eos)?.id;
    if (eosId === undefined) throw new Error(`${folder.path}: eos_token is not an added token`);
    this.eosTokenId = eosId;
    // Longest first so that, at one position, the longest added token wins (HF matches leftmost-longest).
    const alternatives = [...this.addedByContent.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.addedTokenSplitter = new RegExp(`(${alternatives.join("|")})`);
  }

  /** Token ids of `text`; added tokens written in the text are recognised as single tokens. */
  encode(text: string): number[] {
    if (this.folder.nfc && text.normalize("NFC") !== text) {
      // HF splits on added tokens first and normalizes only the text between them (NFC must not
      // fuse an added token's last character with a following combining mark). NFC leaves ASCII
      // alone, so the added tokens are found at the same places in the re-joined text.
      text = text
        .split(this.addedTokenSplitter)
        .map((part, i) => (i % 2 === 1 ? part : part.normalize("NFC")))
        .join("");
    }
    return Array.from(this.encoder.encode(text, "all"));
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    const kept = options.skipSpecialTokens ? ids.filter((id) => !this.specialIds.has(id)) : ids;
    for (const id of kept) this.assertKnownId(id);
    return this.utf8.decode(this.encoder.decode(Uint32Array.from(kept)));
  }

  /** Raw bytes of one token (a token may hold part of a UTF-8 character). */
  tokenBytes(id: number): Uint8Array {
    this.assertKnownId(id);
    return this.encoder.decode_single_token_bytes(id);
  }

  /** Id of an added token such as `<|im_end|>` or `<tool_call>`. */
  addedTokenId(content: string): number | undefined {
    return this.addedByContent.get(content)?.id;
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** Releases the WASM encoder; the instance is unusable afterwards. */
  free(): void {
    this.encoder.free();
  }

  private assertKnownId(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw new RangeError(`token id ${id} is outside the vocabulary (0..${this.vocabSize - 1})`);
    }
  }
}

/** tiktoken's rank file: one "base64(bytes) rank" line per token. */
export function mergeableRanks(vocab: Record<string, number>): string {
  const lines: string[] = [];
  for (const [token, id] of Object.entries(vocab)) {
    lines.push(`${Buffer.from(byteLevelToBytes(token)).toString("base64")} ${id}`);
  }
  return lines.join("\n");
}

function specialTokenMap(added: AddedTokenInfo[]): Record<string, number> {
  return Object.fromEntries(added.map((t) => [t.content, t.id]));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const cache = new Map<string, BpeTokenizer>();

/**
 * The tokenizer of a model folder (default: the bundled Qwen3 one), built once per thread and
 * cached; its prepared form is also cached on disk for other threads and processes.
 */
export function getTokenizer(folderPath: string = defaultModelFolderPath()): BpeTokenizer {
  let tokenizer = cache.get(folderPath);
  if (!tokenizer) {
    const prepared = loadPreparedModel(folderPath, () => {
      const folder = loadModelFolder(folderPath);
      return { folder, ranks: mergeableRanks(folder.vocab) };
    });
    tokenizer = new BpeTokenizer(prepared.folder, prepared.ranks);
    cache.set(folderPath, tokenizer);
  }
  return tokenizer;
}
