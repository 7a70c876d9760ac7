// tito (gateway-rendered prompt, token ids in and out) against the mock engine, compared with the
// vllm backend (engine-rendered prompt) on multi-turn conversations.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockEngine } from "../../mock-engine/index.ts";
import type { PivotMessage } from "../pivot.ts";
import type { Backend } from "./backend.ts";
import { createBackend } from "./index.ts";
import { call, chatRequest, continueConversation } from "../../../test/support/gateway/backend-fixtures.ts";

type Engine = Awaited<ReturnType<typeof startMockEngine>>;
let toolLoop: Engine;
let chatty: Engine;
let toolLoopSglang: Engine;
beforeAll(async () => {
  const toolSteps = [
    { think: "look around", shell: "ls" },
    { think: "write it", shell: "echo hello > out.txt" },
    { think: "verify", text: "Done." },
  ];
  toolLoop = await startMockEngine({ port: 0, script: { steps: toolSteps } });
  toolLoopSglang = await startMockEngine({ port: 0, dialect: "sglang", script: { steps: toolSteps } });
  chatty = await startMockEngine({
    port: 0,
    script: {
      steps: [
        { think: "greet", text: "Hi!" },
        { think: "count", text: "One, two." },
        { think: "end", text: "Bye." },
      ],
    },
  });
});
afterAll(async () => {
  await Promise.all([toolLoop.stop(), chatty.stop(), toolLoopSglang.stop()]);
});

interface TurnComparison {
  vllm: number[];
  tito: number[];
  spliced: number[];
  splice: unknown;
}

/** Drives a conversation with the vllm backend and sends every request to tito with and without splice too. */
async function compareOverConversation(
  engineUrl: string,
  first: PivotMessage[],
  turns: number,
  { thinking, trimContent = false }: { thinking?: boolean; trimContent?: boolean } = {},
): Promise<TurnComparison[]> {
  const vllm = createBackend("vllm", { urls: [engineUrl] });
  const tito = createBackend("tito", { urls: [engineUrl] });
  const splice = createBackend("tito", { urls: [engineUrl], tokenSplice: true });
  const out: TurnComparison[] = [];
  let messages = first;
  for (let turn = 0; turn < turns; turn++) {
    const request = chatRequest(messages, thinking === undefined ? {} : { thinking });
    const [a, b, c] = await Promise.all([call(vllm, request), call(tito, request), call(splice, request)]);
    expect(b.response.content).toBe(a.response.content);
    expect(b.response.reasoning).toBe(a.response.reasoning);
    expect(b.response.tool_calls.map((t) => [t.name, t.arguments])).toEqual(a.response.tool_calls.map((t) => [t.name, t.arguments]));
    expect(b.tokens!.outputIds).toEqual(a.tokens!.outputIds);
    expect(b.tokens!.logprobs.length).toBe(b.tokens!.outputIds.length);
    out.push({
      vllm: Array.from(a.tokens!.promptIds),
      tito: Array.from(b.tokens!.promptIds),
      spliced: Array.from(c.tokens!.promptIds),
      splice: c.notes?.token_splice,
    });
    messages = continueConversation(messages, a.response, `question ${turn + 2}`, trimContent);
  }
  return out;
}

describe("tito backend", () => {
  test("tool loop, content sent back trimmed: tito and spliced prompts equal vLLM's, every earlier turn spliced", async () => {
    const turns = await compareOverConversation(toolLoop.url, [{ role: "user", content: "make the file" }], 3, { trimContent: true });
    turns.forEach((t, i) => {
      expect(t.tito).toEqual(t.vllm);
      expect(t.spliced).toEqual(t.vllm);
      expect(t.splice).toEqual({ used: i, missed: 0, drift: 0 });
    });
  });

  test("tool loop, content sent back verbatim: Qwen3 re-renders the turn differently, so splice misses and prompts still equal vLLM's", async () => {
    // The sample is "<think>…</think>\n\n<tool_call>…"; the parsed content is "\n\n", and the
    // template writes content.lstrip('\n') then a "\n" before <tool_call> because the unstripped
    // content is truthy: "</think>\n\n\n<tool_call>" — one newline more than was sampled.
    const turns = await compareOverConversation(toolLoop.url, [{ role: "user", content: "make the file" }], 3);
    turns.forEach((t, i) => {
      expect(t.tito).toEqual(t.vllm);
      expect(t.spliced).toEqual(t.vllm);
      expect(t.splice).toEqual({ used: 0, missed: i, drift: 0 });
    });
  });

  test("multi-user conversation with thinking: Qwen3 drops earlier <think>, so splice misses but prompts still equal vLLM's", async () => {
    const turns = await compareOverConversation(chatty.url, [{ role: "user", content: "hello" }], 3);
    turns.forEach((t, i) => {
      expect(t.tito).toEqual(t.vllm);
      expect(t.spliced).toEqual(t.vllm);
      expect(t.splice).toEqual({ used: 0, missed: i, drift: 0 });
    });
  });

  test("multi-user conversation without thinking: earlier turns round-trip and are spliced", async () => {
    const turns = await compareOverConversation(chatty.url, [{ role: "user", content: "hello" }], 3, { thinking: false });
    turns.forEach((t, i) => {
      expect(t.tito).toEqual(t.vllm);
      expect(t.spliced).toEqual(t.vllm);
      expect(t.splice).toEqual({ used: i, missed: 0, drift: 0 });
    });
  });

  test("countTokens is the exact prompt length", async () => {
    const tito: Backend = createBackend("tito", { urls: [toolLoop.url] });
    const request = chatRequest([{ role: "user", content: "make the file" }]);
    expect(await tito.countTokens!(request)).toBe((await call(tito, request)).tokens!.promptIds.length);
  });

  test("a malformed tool call is returned as text and marked in notes", async () => {
    const engine = await startMockEngine({ port: 0, script: { steps: [{ text: '<tool_call>\n{"name": "bash", "arguments": {oops}\n</tool_call>' }] } });
    try {
      const result = await call(createBackend("tito", { urls: [engine.url] }), chatRequest([{ role: "user", content: "go" }]));
      expect(result.response.tool_calls).toEqual([]);
      expect(result.response.content).toContain("<tool_call>");
      expect(result.response.finish_reason).toBe("stop");
      expect(typeof result.notes?.tool_call_parse_error).toBe("string");
    } finally {
      await engine.stop();
    }
  });

  test("SGLang /generate (tito on sglang, and the sglang backend's generate mode) gives SGLang chat's prompt ids", async () => {
    const chat = createBackend("sglang", { urls: [toolLoopSglang.url] });
    const generate = createBackend("sglang", { urls: [toolLoopSglang.url], sglangMode: "generate" });
    const tito = createBackend("tito", { urls: [toolLoopSglang.url], titoEngine: "sglang", tokenSplice: true });
    let messages: PivotMessage[] = [{ role: "user", content: "make the file" }];
    for (let turn = 0; turn < 3; turn++) {
      const request = chatRequest(messages);
      const [a, b, c] = await Promise.all([call(chat, request), call(generate, request), call(tito, request)]);
      expect(Array.from(b.tokens!.promptIds)).toEqual(Array.from(a.tokens!.promptIds));
      expect(Array.from(c.tokens!.promptIds)).toEqual(Array.from(a.tokens!.promptIds));
      expect(b.tokens!.outputIds).toEqual(a.tokens!.outputIds);
      expect(b.tokens!.logprobs.length).toBe(b.tokens!.outputIds.length);
      expect(c.notes?.token_splice).toEqual({ used: turn, missed: 0, drift: 0 });
      expect(b.response.tool_calls.map((t) => t.name)).toEqual(a.response.tool_calls.map((t) => t.name));
      messages = continueConversation(messages, a.response, "more", true);
    }
  });
});
