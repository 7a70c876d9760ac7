// The official `@anthropic-ai/sdk` talks to the Anthropic dialect through a custom `fetch` (no
// server): the SDK's own request goes through parseRequest, and its parsers read what we render.
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { PolarError } from "../../../../protocol/errors.ts";
import { engineHttpError } from "../../backends/engine-errors.ts";
import { anthropicDialect } from "./index.ts";
import type { PivotRequest, PivotResponse } from "../../pivot.ts";

/** What the dialect answers: a pivot response, or an error before / during the stream. */
type Outcome = { response: PivotResponse } | { error: PolarError } | { response: PivotResponse; streamError: PolarError };

interface FakeGateway {
  client: Anthropic;
  requests: PivotRequest[];
  urls: string[];
}

/** An SDK client whose HTTP layer is the dialect: parse the body, render the outcome. */
function fakeGateway(outcome: Outcome): FakeGateway {
  const requests: PivotRequest[] = [];
  const urls: string[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    urls.push(String(input instanceof Request ? input.url : input));
    const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    let request: PivotRequest;
    try {
      request = anthropicDialect.parseRequest(JSON.parse(String(init?.body)));
    } catch (error) {
      const rendered = anthropicDialect.renderError(error as PolarError);
      return json(rendered.status, rendered.body);
    }
    requests.push(request);
    if ("error" in outcome) {
      const rendered = anthropicDialect.renderError(outcome.error);
      return json(rendered.status, rendered.body);
    }
    if (!request.stream) return json(200, anthropicDialect.renderResponse(outcome.response, request));
    const frames =
      "streamError" in outcome
        ? [...anthropicDialect.renderStream(outcome.response, request).slice(0, 3), ...anthropicDialect.renderStreamError(outcome.streamError)]
        : anthropicDialect.renderStream(outcome.response, request);
    return new Response(frames.join(""), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const client = new Anthropic({ apiKey: "sk-polar-test", baseURL: "http://127.0.0.1:9", fetch, maxRetries: 0 });
  return { client, requests, urls };
}

const TOOL_TURN: PivotResponse = {
  id: "chatcmpl-7",
  model: "Qwen/Qwen3-0.6B",
  reasoning: "The user wants a file; use Bash.",
  content: "I'll create it.",
  tool_calls: [{ id: "call_abc", name: "Bash", arguments: '{"command":"echo hello > out.txt","description":"write file"}' }],
  finish_reason: "tool_calls",
  usage: { prompt_tokens: 321, completion_tokens: 45 },
};

const PARAMS = {
  model: "fake-model",
  max_tokens: 1024,
  system: [{ type: "text" as const, text: "You are terse.", cache_control: { type: "ephemeral" as const } }],
  messages: [{ role: "user" as const, content: "Create out.txt with hello." }],
  tools: [
    {
      name: "Bash",
      description: "Run a shell command",
      input_schema: { type: "object" as const, properties: { command: { type: "string" } }, required: ["command"] },
    },
  ],
  thinking: { type: "enabled" as const, budget_tokens: 512 },
};

function expectToolTurn(message: Anthropic.Message): void {
  expect(message.id).toBe("msg_chatcmpl-7");
  expect(message.model).toBe("fake-model");
  expect(message.stop_reason).toBe("tool_use");
  expect(message.stop_sequence).toBeNull();
  expect(message.usage.input_tokens).toBe(321);
  expect(message.usage.output_tokens).toBe(45);
  const [thinking, text, toolUse, ...rest] = message.content;
  expect(rest).toEqual([]);
  if (thinking?.type !== "thinking" || text?.type !== "text" || toolUse?.type !== "tool_use") {
    throw new Error(`unexpected blocks ${JSON.stringify(message.content)}`);
  }
  expect(thinking.thinking).toBe("The user wants a file; use Bash.");
  expect(thinking.signature.length).toBeGreaterThan(0);
  expect(text.text).toBe("I'll create it.");
  expect(toolUse.id).toBe("toolu_call_abc");
  expect(toolUse.name).toBe("Bash");
  expect(toolUse.input).toEqual({ command: "echo hello > out.txt", description: "write file" });
}

describe("@anthropic-ai/sdk against the Anthropic dialect", () => {
  test("messages.create (non-streaming) reads the Message; the SDK's request parses to the pivot", async () => {
    const gateway = fakeGateway({ response: TOOL_TURN });
    const message = await gateway.client.messages.create(PARAMS);
    expectToolTurn(message);
    expect(gateway.urls).toEqual(["http://127.0.0.1:9/v1/messages"]);
    const [request] = gateway.requests;
    expect(request?.stream).toBe(false);
    expect(request?.thinking).toBe(true);
    expect(request?.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "Create out.txt with hello." },
    ]);
    expect(request?.tools.map((tool) => tool.name)).toEqual(["Bash"]);
  });

  test("messages.stream(...).finalMessage() accumulates the same Message", async () => {
    const gateway = fakeGateway({ response: TOOL_TURN });
    const stream = gateway.client.messages.stream(PARAMS);
    const texts: string[] = [];
    stream.on("text", (delta) => texts.push(delta));
    const message = await stream.finalMessage();
    expectToolTurn(message);
    expect(texts.join("")).toBe("I'll create it.");
    expect(gateway.requests[0]?.stream).toBe(true);
  });

  test("streamed and non-streamed answers are equal", async () => {
    const plain = await fakeGateway({ response: TOOL_TURN }).client.messages.create(PARAMS);
    const streamed = await fakeGateway({ response: TOOL_TURN }).client.messages.stream(PARAMS).finalMessage();
    // `parsed_output` is the stream helper's own addition (structured outputs), not wire data.
    const { parsed_output: _helperField, ...streamedWire } = streamed;
    expect(JSON.parse(JSON.stringify(streamedWire))).toEqual(JSON.parse(JSON.stringify(plain)));
  });

  test("a stop-sequence ending and a text-only answer", async () => {
    const response: PivotResponse = { ...TOOL_TURN, reasoning: undefined, content: "hello", tool_calls: [], finish_reason: "stop", stop_sequence: "###" };
    const message = await fakeGateway({ response })
      .client.messages.stream({ ...PARAMS, stop_sequences: ["###"] })
      .finalMessage();
    expect(message.content as unknown).toEqual([{ type: "text", text: "hello", citations: null }]);
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("###");
  });

  test("raw stream events via create({stream:true})", async () => {
    const stream = await fakeGateway({ response: TOOL_TURN }).client.messages.create({ ...PARAMS, stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(types.filter((type) => type === "content_block_start")).toHaveLength(3);
  });

  test("a context_length error raises BadRequestError with Anthropic's wording", async () => {
    const error = new PolarError("context_length", "too long", { prompt_tokens: 40000, max_context_tokens: 32768 });
    const caught = await fakeGateway({ error })
      .client.messages.create(PARAMS)
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(Anthropic.BadRequestError);
    const apiError = caught as InstanceType<typeof Anthropic.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.type).toBe("invalid_request_error");
    expect(apiError.apiMessage).toBe("prompt is too long: 40000 tokens > 32768 maximum");
  });

  test("a real vLLM overflow answer, mapped by the backend, reads as Anthropic's prompt-too-long", async () => {
    const vllmBody = JSON.stringify({
      object: "error",
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      code: 400,
    });
    const error = engineHttpError(400, vllmBody, "http://127.0.0.1:8000");
    const caught = await fakeGateway({ error })
      .client.messages.create(PARAMS)
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(Anthropic.BadRequestError);
    expect((caught as InstanceType<typeof Anthropic.BadRequestError>).apiMessage).toBe("prompt is too long: 5000 tokens > 4096 maximum");
  });

  test("an unknown key raises AuthenticationError", async () => {
    const caught = await fakeGateway({ error: new PolarError("unauthorized", "unknown API key") })
      .client.messages.create(PARAMS)
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((caught as InstanceType<typeof Anthropic.AuthenticationError>).status).toBe(401);
    expect((caught as InstanceType<typeof Anthropic.AuthenticationError>).apiMessage).toBe("unknown API key");
  });

  test("a malformed body is answered with BadRequestError naming the field", async () => {
    const gateway = fakeGateway({ response: TOOL_TURN });
    const caught = await gateway.client.messages
      .create({ ...PARAMS, messages: [{ role: "user", content: [{ type: "text", text: 7 as unknown as string }] }] })
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(Anthropic.BadRequestError);
    expect((caught as InstanceType<typeof Anthropic.BadRequestError>).apiMessage).toStartWith("messages.0.content.0.text: ");
    expect(gateway.requests).toEqual([]);
  });

  test("an overloaded engine gives a 529 the SDK reports as overloaded_error", async () => {
    const caught = await fakeGateway({ error: new PolarError("overloaded", "engine busy") })
      .client.messages.create(PARAMS)
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(Anthropic.InternalServerError);
    expect((caught as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((caught as InstanceType<typeof Anthropic.APIError>).type).toBe("overloaded_error");
  });

  test("an error event mid-stream rejects finalMessage with the typed APIError", async () => {
    const gateway = fakeGateway({ response: TOOL_TURN, streamError: new PolarError("engine_timeout", "engine did not answer") });
    const caught = await gateway.client.messages
      .stream(PARAMS)
      .finalMessage()
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(Anthropic.APIError);
    expect((caught as InstanceType<typeof Anthropic.APIError>).type).toBe("timeout_error");
    expect((caught as InstanceType<typeof Anthropic.APIError>).apiMessage).toBe("engine did not answer");
  });
});
