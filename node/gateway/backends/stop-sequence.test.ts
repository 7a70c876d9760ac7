// Every token-capturing backend reports the stop string that ended generation as the pivot's
// stopSequence, and never a stop token id (SGLang reports the EOS id the same way).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockEngine } from "../../mock-engine/index.ts";
import { getTokenizer } from "../../tokenizer/index.ts";
import type { PivotRequest } from "../pivot.ts";
import { createBackend } from "./index.ts";
import type { BackendKind, BackendOptionsInput } from "./options.ts";
import { stopSequenceOf } from "./openai-chat.ts";
import { call, chatRequest } from "../../../test/support/gateway/backend-fixtures.ts";

type Engine = Awaited<ReturnType<typeof startMockEngine>>;
const script = { steps: [{ text: "Alpha beta. STOP gamma delta." }] };
let vllm: Engine;
let sglang: Engine;
beforeAll(async () => {
  vllm = await startMockEngine({ port: 0, script });
  sglang = await startMockEngine({ port: 0, script, dialect: "sglang" });
});
afterAll(async () => {
  await Promise.all([vllm.stop(), sglang.stop()]);
});

const BACKENDS: { name: string; kind: BackendKind; engine: () => Engine; options?: Partial<BackendOptionsInput> }[] = [
  { name: "vllm", kind: "vllm", engine: () => vllm },
  { name: "sglang chat", kind: "sglang", engine: () => sglang },
  { name: "sglang generate", kind: "sglang", engine: () => sglang, options: { sglangMode: "generate" } },
  { name: "tito on vLLM completions", kind: "tito", engine: () => vllm },
];

function request(stop?: string[]): PivotRequest {
  return chatRequest([{ role: "user", content: "Say something." }], {
    tools: [],
    thinking: false,
    sampling: { max_tokens: 64, seed: 1, ...(stop && { stop }) },
  });
}

describe.each(BACKENDS)("$name backend", ({ kind, engine, options }) => {
  test("a matched stop string ends the answer and is reported as stopSequence", async () => {
    const backend = createBackend(kind, { urls: [engine().url], ...options });
    const result = await call(backend, request(["never-there", "STOP"]));
    expect(result.response.content).toBe("Alpha beta. ");
    expect(result.response.finish_reason).toBe("stop");
    expect(result.response.stop_sequence).toBe("STOP");
    // The token completing the stop string was sampled: it stays in the captured ids.
    expect(getTokenizer().decode(result.tokens!.outputIds)).toContain("STOP");
  });

  test("an EOS ending has no stopSequence", async () => {
    const backend = createBackend(kind, { urls: [engine().url], ...options });
    const result = await call(backend, request());
    expect(result.response.content).toBe("Alpha beta. STOP gamma delta.");
    expect(result.response.finish_reason).toBe("stop");
    expect(result.response.stop_sequence).toBeUndefined();
  });
});

test("only a string that ended a 'stop' finish is a stop sequence", () => {
  expect(stopSequenceOf("stop", "###")).toBe("###");
  expect(stopSequenceOf("stop", 151645)).toBeUndefined();
  expect(stopSequenceOf("stop", null)).toBeUndefined();
  expect(stopSequenceOf("length", "###")).toBeUndefined();
  expect(stopSequenceOf("tool_calls", "###")).toBeUndefined();
});
