// Why: the gateway talks to every inference engine through this one interface, so dialects and
// recording never know whether tokens came from vLLM, SGLang, a token-in/token-out path or a
// plain OpenAI-compatible API.
import type { CallNotes } from "../../../protocol/calls.ts";
import type { CacheBudget } from "../../cache-budget.ts";
import type { TokenIdList } from "../../store/token-codec.ts";
import type { PivotRequest, PivotResponse } from "../pivot.ts";

/** Token capture of one engine call. Absent when the backend cannot see token ids. */
export interface TokenCapture {
  /** A Uint32Array when parsed from a chat answer (prompt-ids-json.ts); never changed once captured. */
  promptIds: TokenIdList;
  outputIds: number[];
  /** One logprob per output id. */
  logprobs: number[];
}

export interface EngineResult {
  response: PivotResponse;
  tokens: TokenCapture | null;
  /** Base URL of the engine that served the call. */
  engineUrl: string;
  /** Backend-specific facts worth recording (e.g. tool-call parse failure, token splice used). */
  notes?: CallNotes;
}

export interface EngineCall {
  request: PivotRequest;
  /** Routing key: calls of one session stick to one engine (prefix cache). */
  sessionId: string;
  signal: AbortSignal;
}

export interface Backend {
  readonly name: string;
  complete(call: EngineCall): Promise<EngineResult>;
  /** Exact prompt token count when the backend knows the tokenizer; undefined otherwise. */
  countTokens?(request: PivotRequest): Promise<number | undefined>;
  /** Model ids the engines serve (for GET /v1/models). */
  listModels(): Promise<string[]>;
  /** Drops per-session state (sticky engine, token-splice cache) when a session ends. */
  forgetSession?(sessionId: string): void;
  /** Counts the backend's per-session caches against the gateway's shared byte budget. */
  shareCacheBudget?(budget: CacheBudget): void;
}
