// Why: the end-to-end dialect tests must hold for every token-capturing backend (issue 3), so the
// backend configurations, what each legitimately does differently, and the shared token checks
// live in one place; each dialect test runs its tool loops once per configuration.
import { expect } from "bun:test";
import { z } from "zod";
import type { CallNotes, RecordedCall } from "../../protocol/calls.ts";
import type { BackendKind, BackendOptionsInput } from "../../node/gateway/backends/options.ts";
import { engineChatExtras, openAiChatBody } from "../../node/gateway/backends/openai-chat.ts";
import type { PivotRequest } from "../../node/gateway/pivot.ts";
import type { EngineApi } from "../../node/mock-engine/index.ts";
import { ENGINE_MODEL, startStack, type Stack, type StackOptions } from "./stack.ts";

export interface BackendConfig {
  /** Test title. */
  name: string;
  backend: BackendKind;
  backendOptions: Partial<BackendOptionsInput>;
  /** The API the mock engine speaks. */
  engineApi: EngineApi;
  /** The engine route the backend generates through. */
  generateRoute: "/v1/chat/completions" | "/v1/completions" | "/generate";
  /**
   * Ids of parsed tool calls show who parsed them: vLLM's hermes parser (`chatcmpl-tool-` + 32 hex),
   * SGLang's (`call_` + 24 hex), or the gateway itself on the token routes (node/tokenizer's
   * parseQwen3Output, vLLM's format) — completions and /generate have no tool parser.
   */
  toolCallId: RegExp;
  /** Backend notes recorded on the first and the second call of a two-turn tool loop. */
  notes: readonly [CallNotes | null, CallNotes | null];
}

const NO_SPLICE_YET = { token_splice: { used: 0, missed: 0, drift: 0 } };
/** Turn 1 spliced back verbatim; the mock samples BPE-canonical ids, so no drift. */
const TURN_ONE_SPLICED = { token_splice: { used: 1, missed: 0, drift: 0 } };
/** SGLang's chat answer carries meta_info.weight_version; the backend records it. */
const SGLANG_WEIGHTS = { weight_version: "default" };
const VLLM_TOOL_CALL_ID = /^chatcmpl-tool-[0-9a-f]{32}$/;
const SGLANG_TOOL_CALL_ID = /^call_[0-9a-f]{24}$/;

export const BACKEND_MATRIX: readonly BackendConfig[] = [
  {
    name: "vllm (chat completions)",
    backend: "vllm",
    backendOptions: {},
    engineApi: "vllm",
    generateRoute: "/v1/chat/completions",
    toolCallId: VLLM_TOOL_CALL_ID,
    notes: [null, null],
  },
  {
    name: "sglang chat",
    backend: "sglang",
    backendOptions: {},
    engineApi: "sglang",
    generateRoute: "/v1/chat/completions",
    toolCallId: SGLANG_TOOL_CALL_ID,
    notes: [SGLANG_WEIGHTS, SGLANG_WEIGHTS],
  },
  {
    name: "sglang generate (tito on /generate)",
    backend: "sglang",
    backendOptions: { sglangMode: "generate" },
    engineApi: "sglang",
    generateRoute: "/generate",
    toolCallId: VLLM_TOOL_CALL_ID,
    notes: [null, null],
  },
  {
    name: "tito on vLLM /v1/completions",
    backend: "tito",
    backendOptions: {},
    engineApi: "vllm",
    generateRoute: "/v1/completions",
    toolCallId: VLLM_TOOL_CALL_ID,
    notes: [null, null],
  },
  {
    name: "tito on vLLM /v1/completions with token splice",
    backend: "tito",
    backendOptions: { tokenSplice: true },
    engineApi: "vllm",
    generateRoute: "/v1/completions",
    toolCallId: VLLM_TOOL_CALL_ID,
    notes: [NO_SPLICE_YET, TURN_ONE_SPLICED],
  },
];

/** A stack whose backend and engine API follow the configuration. */
export function startMatrixStack(config: BackendConfig, options: StackOptions = {}): Promise<Stack> {
  return startStack({
    ...options,
    backend: config.backend,
    backendOptions: { ...config.backendOptions, ...options.backendOptions },
    engine: { ...options.engine, dialect: config.engineApi },
  });
}

const Tokenized = z.object({ tokens: z.array(z.number().int()) });
const SglangChatPrompt = z.object({ choices: z.tuple([z.object({ prompt_token_ids: z.array(z.number().int()) })]) });

async function postJson(stack: Stack, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${stack.engineUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path} failed: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * The prompt ids the engine itself gives this conversation: the recorded request goes to the
 * engine as an OpenAI chat body, and the engine renders it (its own messages → chat template
 * conversion, not the gateway's pivotToTemplateMessages). vLLM: `POST /tokenize` with the chat
 * messages. SGLang's /tokenize takes no messages, so a one-token chat completion with
 * `return_prompt_token_ids` (serving_chat.py) reports the prompt the engine rendered.
 */
export async function engineTokenization(stack: Stack, config: BackendConfig, request: PivotRequest): Promise<number[]> {
  if (config.engineApi === "sglang") {
    const body = {
      ...openAiChatBody(request, { model: ENGINE_MODEL, reasoningField: "reasoning_content" }),
      ...engineChatExtras(request),
      max_tokens: 1,
      return_prompt_token_ids: true,
    };
    const answer = SglangChatPrompt.parse(await postJson(stack, "/v1/chat/completions", body));
    return answer.choices[0].prompt_token_ids;
  }
  const body = { ...openAiChatBody(request, { model: ENGINE_MODEL, reasoningField: "reasoning_and_content" }), ...engineChatExtras(request) };
  return Tokenized.parse(await postJson(stack, "/tokenize", body)).tokens;
}

/**
 * What every configuration must record for a two-turn tool loop: the engine API it used, prompt
 * ids equal to the engine's tokenization, sampled ids with one logprob each, the configuration's
 * own notes and tool-call id format, and a second prompt that extends the first prompt plus its
 * sampled ids.
 */
export async function expectTokenFaithfulLoop(stack: Stack, config: BackendConfig, calls: RecordedCall[]): Promise<void> {
  expect(calls).toHaveLength(2);
  // Read before engineTokenization, whose own engine calls (SGLang: a chat completion) are no generations of the loop.
  const generations = stack.engine.requests.filter((line) => line.startsWith("POST ") && line !== "POST /tokenize");
  expect(generations).toEqual([`POST ${config.generateRoute}`, `POST ${config.generateRoute}`]);
  for (const [i, call] of calls.entries()) {
    expect(call.prompt_ids).toEqual(await engineTokenization(stack, config, call.request));
    expect(call.output_ids?.length ?? 0).toBeGreaterThan(0);
    expect(call.logprobs).toHaveLength(call.output_ids?.length ?? -1);
    expect(call.logprobs?.every((logprob) => logprob < 0)).toBe(true);
    expect(call.response?.usage).toEqual({ prompt_tokens: call.prompt_ids?.length ?? -1, completion_tokens: call.output_ids?.length ?? -1 });
    expect(call.notes).toEqual(config.notes[i] ?? null);
  }
  const [first, second] = calls;
  expect(first?.response?.tool_calls.map((toolCall) => toolCall.id)).toEqual([expect.stringMatching(config.toolCallId)]);
  const firstTurn = [...(first?.prompt_ids ?? []), ...(first?.output_ids ?? [])];
  expect(second?.prompt_ids?.slice(0, firstTurn.length)).toEqual(firstTurn);
}
