// SDK fidelity without a server: the official `openai` client, given a fetch that answers with
// what the Responses dialect renders, must read back the pivot response (text, reasoning, function
// calls with ids/names/arguments/namespace) from create(), create({stream}) and
// stream().finalResponse() — and the streamed final response must equal the non-streamed body.
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { PolarError } from "../../../../protocol/errors.ts";
import type { PivotResponse } from "../../pivot.ts";
import { responsesDialect } from "./index.ts";
import { clientAnswering, clientFailing, SSE_HEADERS } from "../../../../test/support/gateway/openai-sdk.ts";

const TOOL_TURN: PivotResponse = {
  id: "abc123",
  model: "qwen3-test",
  content: "Running it.",
  reasoning: "Need a shell call.",
  tool_calls: [
    { id: "call_1", name: "exec_command", arguments: '{"cmd":"echo hello > out.txt"}' },
    { id: "call_2", name: "multi_agent_v1__spawn_agent", arguments: '{"task":"check"}' },
  ],
  finish_reason: "tool_calls",
  usage: { prompt_tokens: 321, completion_tokens: 45 },
};

const TOOL_ONLY: PivotResponse = {
  id: "def456",
  model: "qwen3-test",
  content: "",
  tool_calls: [{ id: "call_7", name: "exec_command", arguments: '{"cmd":"ls"}' }],
  finish_reason: "tool_calls",
  usage: { prompt_tokens: 30, completion_tokens: 8 },
};

const FINAL_TEXT: PivotResponse = {
  id: "ghi789",
  model: "qwen3-test",
  content: "Done. 完成 ✅",
  reasoning: "All good.",
  tool_calls: [],
  finish_reason: "stop",
  usage: { prompt_tokens: 400, completion_tokens: 4 },
};

const TRUNCATED: PivotResponse = {
  id: "jkl000",
  model: "qwen3-test",
  content: "This answer was cut",
  tool_calls: [],
  finish_reason: "length",
  usage: { prompt_tokens: 50, completion_tokens: 16 },
};

const CASES = { TOOL_TURN, TOOL_ONLY, FINAL_TEXT, TRUNCATED };

/** codex-like tools: a plain function tool, a namespace, and types Polar drops. */
const TOOLS = [
  { type: "function", name: "exec_command", strict: false, parameters: { type: "object", properties: { cmd: { type: "string" } } } },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "agents",
    tools: [{ type: "function", name: "spawn_agent", strict: false, parameters: { type: "object", properties: {} } }],
  },
  { type: "web_search" },
] as unknown as OpenAI.Responses.Tool[];

interface Observed {
  text: string;
  reasoning: string;
  calls: { id: string; name: string; arguments: string }[];
  status: string | undefined;
}

/** What a harness reads from a Response: text, reasoning summary, and calls under their model-visible names. */
function observe(response: OpenAI.Responses.Response): Observed {
  const out: Observed = { text: "", reasoning: "", calls: [], status: response.status };
  for (const item of response.output) {
    if (item.type === "message") {
      for (const part of item.content) if (part.type === "output_text") out.text += part.text;
    } else if (item.type === "reasoning") {
      out.reasoning += item.summary.map((part) => part.text).join("");
    } else if (item.type === "function_call") {
      const name = item.namespace ? `${item.namespace}__${item.name}` : item.name;
      out.calls.push({ id: item.call_id, name, arguments: item.arguments });
    }
  }
  return out;
}

function expected(response: PivotResponse): Observed {
  return {
    text: response.content,
    reasoning: response.reasoning ?? "",
    calls: response.tool_calls,
    status: response.finish_reason === "length" ? "incomplete" : "completed",
  };
}

const PARAMS = { model: "m", input: "make out.txt", tools: TOOLS };

/** Timestamps differ between two renderings; everything else must match. */
function withoutTimestamps<T extends { created_at: number }>(response: T): T {
  return { ...response, created_at: 0 };
}

describe("responses dialect through the official openai SDK", () => {
  for (const [label, response] of Object.entries(CASES)) {
    test(`${label}: create() returns the pivot response`, async () => {
      const body = await clientAnswering(responsesDialect, response).responses.create(PARAMS);
      expect(body.id).toBe(`resp_${response.id}`);
      expect(observe(body)).toEqual(expected(response));
      expect(body.output_text).toBe(response.content);
      expect(body.usage?.input_tokens).toBe(response.usage.prompt_tokens);
      expect(body.usage?.output_tokens).toBe(response.usage.completion_tokens);
      expect(body.usage?.total_tokens).toBe(response.usage.prompt_tokens + response.usage.completion_tokens);
    });

    test(`${label}: stream().finalResponse() equals the non-streaming body`, async () => {
      const client = clientAnswering(responsesDialect, response);
      const final = await client.responses.stream(PARAMS).finalResponse();
      expect(observe(final)).toEqual(expected(response));
      // parse() is the non-streaming call with the same SDK post-processing (output_parsed, parsed).
      const body = await client.responses.parse(PARAMS);
      expect(withoutTimestamps(final)).toEqual(withoutTimestamps(body));
    });

    test(`${label}: create({stream:true}) deltas rebuild the same text, reasoning and calls`, async () => {
      const stream = await clientAnswering(responsesDialect, response).responses.create({ ...PARAMS, stream: true });
      const got: Observed = { text: "", reasoning: "", calls: [], status: undefined };
      const arguments_ = new Map<string, string>();
      const sequence: number[] = [];
      for await (const event of stream) {
        sequence.push(event.sequence_number);
        if (event.type === "response.output_text.delta") got.text += event.delta;
        if (event.type === "response.reasoning_summary_text.delta") got.reasoning += event.delta;
        if (event.type === "response.function_call_arguments.delta") {
          arguments_.set(event.item_id, (arguments_.get(event.item_id) ?? "") + event.delta);
        }
        if (event.type === "response.output_item.done" && event.item.type === "function_call") {
          const item = event.item;
          const name = item.namespace ? `${item.namespace}__${item.name}` : item.name;
          got.calls.push({ id: item.call_id, name, arguments: arguments_.get(item.id ?? "") ?? "" });
        }
        if (event.type === "response.completed" || event.type === "response.incomplete") got.status = event.response.status;
      }
      expect(got).toEqual(expected(response));
      expect(sequence).toEqual(sequence.map((_, index) => index));
    });
  }

  test("events alone rebuild the output when response.completed carries none", async () => {
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: "http://127.0.0.1:9/v1",
      maxRetries: 0,
      fetch: async (_url, init) => {
        const request = responsesDialect.parseRequest(JSON.parse(String(init?.body)));
        const frames = responsesDialect.renderStream(TOOL_TURN, request).map((frame) => {
          if (!frame.startsWith("event: response.completed\n")) return frame;
          const data = JSON.parse(frame.slice(frame.indexOf("data: ") + "data: ".length));
          delete data.response.output;
          return `event: response.completed\ndata: ${JSON.stringify(data)}\n\n`;
        });
        return new Response(frames.join(""), { headers: SSE_HEADERS });
      },
    });
    const final = await client.responses.stream(PARAMS).finalResponse();
    expect(observe(final)).toEqual(expected(TOOL_TURN));
    const body = await clientAnswering(responsesDialect, TOOL_TURN).responses.parse(PARAMS);
    expect(withoutTimestamps(final)).toEqual(withoutTimestamps(body));
  });

  test("a namespaced tool call goes back as {namespace, name}, as codex routes it", async () => {
    const body = await clientAnswering(responsesDialect, TOOL_TURN).responses.create(PARAMS);
    const calls = body.output.filter((item) => item.type === "function_call");
    expect(calls.map((call) => ({ name: call.name, namespace: call.namespace }))).toEqual([
      { name: "exec_command", namespace: undefined },
      { name: "spawn_agent", namespace: "multi_agent_v1" },
    ]);
  });
});

describe("responses dialect errors through the official openai SDK", () => {
  test("context_length → BadRequestError 400 with code context_length_exceeded", async () => {
    const error = await clientFailing(responsesDialect, new PolarError("context_length", "prompt too long"))
      .responses.create(PARAMS)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const typed = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(typed.status).toBe(400);
    expect(typed.code).toBe("context_length_exceeded");
    expect(typed.param).toBe("input");
  });

  test("unauthorized → AuthenticationError 401", async () => {
    const error = await clientFailing(responsesDialect, new PolarError("unauthorized", "unknown key"))
      .responses.create(PARAMS)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
  });

  test("a failure mid-stream makes finalResponse() reject with the error code", async () => {
    const error = await clientFailing(responsesDialect, new PolarError("context_length", "prompt too long"), true)
      .responses.stream(PARAMS)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("context_length_exceeded");
  });

  test("the streamed failure carries response.failed with the error code codex reads", () => {
    const frames = responsesDialect.renderStreamError(new PolarError("context_length", "prompt too long"));
    const events = frames.map((frame) => {
      const [eventLine, dataLine] = frame.trim().split("\n");
      return { event: eventLine?.slice("event: ".length), data: JSON.parse(dataLine?.slice("data: ".length) ?? "null") };
    });
    expect(events.map((e) => e.event)).toEqual(["error", "response.failed"]);
    expect(events[1]?.data.response.status).toBe("failed");
    expect(events[1]?.data.response.error.code).toBe("context_length_exceeded");
  });
});
