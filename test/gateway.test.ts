// End-to-end gateway behaviour over real HTTP: auth rules, malformed bodies, engine failures
// and timeouts, restart durability, weight-sync pause/resume, token capture.
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { RecordedCall } from "../protocol/calls.ts";
import { AdminState } from "../protocol/admin.ts";
import { SessionInfo } from "../protocol/sessions.ts";
import { defaultModelFolderPath } from "../node/tokenizer/index.ts";
import { ADMIN_TOKEN, ENGINE_MODEL, stackPerTest } from "./helpers/stack.ts";

const stack = stackPerTest();

const chatBody = (content = "Say hi.") => ({ model: "fake-model", messages: [{ role: "user", content }], max_tokens: 64 });
const anthropicBody = { model: "fake-model", max_tokens: 64, messages: [{ role: "user", content: "Say hi." }] };
const responsesBody = { model: "fake-model", input: "Say hi." };

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("auth", () => {
  test("unknown or missing keys get 401 in each dialect's own error shape", async () => {
    const s = await stack();
    const bad = { authorization: "Bearer pl-not-a-session" };
    const chat = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), bad);
    expect(chat.status).toBe(401);
    expect(((await chat.json()) as { error: { message: string } }).error.message).toContain("unknown API key");

    const anthropic = await post(`${s.gateway.url}/v1/messages?beta=true`, anthropicBody, { "x-api-key": "pl-nope" });
    expect(anthropic.status).toBe(401);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });

    const responses = await post(`${s.gateway.url}/v1/responses`, responsesBody);
    expect(responses.status).toBe(401);
    expect(((await responses.json()) as { error: { message: string } }).error.message).toContain("missing API key");
  });

  test("the admin token is not an LLM key, and a session token does not grant the session API", async () => {
    const s = await stack();
    const session = await s.session();
    const asLlmKey = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(asLlmKey.status).toBe(401);

    const withSessionToken = await fetch(`${s.gateway.url}/v1/sessions/${session.id}/calls`, { headers: { authorization: `Bearer ${session.token}` } });
    expect(withSessionToken.status).toBe(403);
    const create = await fetch(`${s.gateway.url}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${session.token}` } });
    expect(create.status).toBe(403);
    const pause = await fetch(`${s.gateway.url}/v1/admin/pause`, { method: "POST", headers: { "x-api-key": session.token } });
    expect(pause.status).toBe(403);
    const noToken = await fetch(`${s.gateway.url}/v1/sessions/${session.id}`);
    expect(noToken.status).toBe(401);
  });

  test("a session is reached by Bearer key, x-api-key or /s/<token>/ path, and calls are attributed to it", async () => {
    const s = await stack();
    const session = await s.session({ rollout: "r1" });
    expect(session.openai_base_url).toBe(`${s.gateway.url}/s/${session.token}/v1`);
    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), { authorization: `Bearer ${session.token}` })).status).toBe(200);
    expect((await post(`${s.gateway.url}/v1/messages`, anthropicBody, { "x-api-key": session.token })).status).toBe(200);
    expect((await post(`${session.openai_base_url}/responses`, responsesBody)).status).toBe(200);
    const calls = await s.calls(session.id);
    expect(calls.map((c) => [c.seq, c.dialect])).toEqual([
      [0, "chat"],
      [1, "anthropic"],
      [2, "responses"],
    ]);
    const info = SessionInfo.parse(await (await s.admin(`/v1/sessions/${session.id}`)).json());
    expect(info).toMatchObject({ call_count: 3, metadata: { rollout: "r1" } });
    expect(info.token).toBeUndefined();
  });

  test("closed sessions refuse calls but keep their record; deleted sessions are gone", async () => {
    const s = await stack();
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key)).status).toBe(200);
    expect((await s.admin(`/v1/sessions/${session.id}/close`, { method: "POST" })).status).toBe(200);
    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key)).status).toBe(401);
    expect(await s.calls(session.id)).toHaveLength(1);
    expect((await s.admin(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await s.admin(`/v1/sessions/${session.id}`)).status).toBe(404);
  });

  test("--open makes each unknown key its own session, but never the admin token", async () => {
    const s = await stack({ gateway: { open: true } });
    const a = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), { authorization: "Bearer offline-key-a" });
    expect(a.status).toBe(200);
    const again = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), { authorization: "Bearer offline-key-a" });
    expect(again.status).toBe(200);
    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(401);
  });
});

describe("bad input", () => {
  test("a malformed body gets a 4xx in the dialect's shape and the server stays up", async () => {
    const s = await stack();
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const notJson = await post(`${s.gateway.url}/v1/chat/completions`, "{not json", key);
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { type: "invalid_request_error" } });

    const noMessages = await post(`${s.gateway.url}/v1/chat/completions`, { model: "m" }, key);
    expect(noMessages.status).toBe(400);
    expect(((await noMessages.json()) as { error: { message: string } }).error.message).toContain("messages");

    const badAnthropic = await post(`${s.gateway.url}/v1/messages`, { model: "m", messages: "hi" }, key);
    expect(badAnthropic.status).toBe(400);
    expect(await badAnthropic.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });

    const badResponses = await post(`${s.gateway.url}/v1/responses`, { model: "m", input: 42 }, key);
    expect(badResponses.status).toBe(400);
    expect(await badResponses.json()).toMatchObject({ error: { type: "invalid_request_error" } });

    const badSession = await s.admin("/v1/sessions", { method: "POST", body: JSON.stringify({ metadata: "x" }) });
    expect(badSession.status).toBe(400);

    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key)).status).toBe(200);
    expect(await s.calls(session.id)).toHaveLength(1);
  });

  test("unknown trajectory strategy is a 400 naming the choices", async () => {
    const s = await stack();
    const session = await s.session();
    const res = await s.admin(`/v1/sessions/${session.id}/trajectory?strategy=magic`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("prefix-merge");
  });
});

describe("engine failures", () => {
  test("a failing engine gives a well-formed 5xx in each dialect, and the failure is recorded", async () => {
    const s = await stack({ engine: { failFirst: 3 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const chat = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key);
    expect(chat.status).toBe(502);
    expect(((await chat.json()) as { error: { message: string } }).error.message.length).toBeGreaterThan(0);
    const anthropic = await post(`${s.gateway.url}/v1/messages`, { ...anthropicBody, stream: true }, key);
    expect(anthropic.status).toBeGreaterThanOrEqual(500);
    expect(await anthropic.json()).toMatchObject({ type: "error" });
    const responses = await post(`${s.gateway.url}/v1/responses`, responsesBody, key);
    expect(responses.status).toBe(502);
    // The engine has recovered: the next call works.
    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key)).status).toBe(200);
    const calls = await s.calls(session.id);
    expect(calls.map((c) => c.error?.code ?? "ok")).toEqual(["engine_unavailable", "engine_unavailable", "engine_unavailable", "ok"]);
  });

  test("a prompt over the engine's context is the context-length error each harness recognises", async () => {
    const s = await stack({ engine: { maxModelLen: 64 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const long = "Please read this long request carefully. ".repeat(20);
    const chat = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(long), key);
    expect(chat.status).toBe(400);
    expect(await chat.json()).toMatchObject({ error: { code: "context_length_exceeded", type: "invalid_request_error" } });
    const responses = await post(`${s.gateway.url}/v1/responses`, { model: "m", input: long }, key);
    expect(responses.status).toBe(400);
    expect(await responses.json()).toMatchObject({ error: { code: "context_length_exceeded" } });
    const anthropic = await post(`${s.gateway.url}/v1/messages`, { ...anthropicBody, messages: [{ role: "user", content: long }] }, key);
    expect(anthropic.status).toBe(400);
    const body = (await anthropic.json()) as { type: string; error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/^prompt is too long: \d+ tokens > 64 maximum$/);
    expect((await s.calls(session.id)).map((c) => c.error?.code)).toEqual(["context_length", "context_length", "context_length"]);
  });

  test("retries recover from transient engine 5xx without the harness seeing them", async () => {
    const s = await stack({ engine: { failFirst: 2 }, backendOptions: { retries: 2, backoffMs: 10 } });
    const session = await s.session();
    const res = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), { authorization: `Bearer ${session.token}` });
    expect(res.status).toBe(200);
    const [call] = await s.calls(session.id);
    expect(call!.error).toBeNull();
    expect(call!.output_ids!.length).toBeGreaterThan(0);
  });

  test("a hung engine ends in a timeout error, never a hung socket, streamed or not", async () => {
    const s = await stack({ engine: { hangCalls: [1, 2] }, backendOptions: { timeoutMs: 500 }, gateway: { streamHeadStartMs: 100, keepAliveMs: 50 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const plain = await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key);
    expect(plain.status).toBe(504);
    expect(await plain.json()).toMatchObject({ error: { type: expect.any(String) } });

    // Streamed: the head start passes, so the gateway commits to 200, keeps the stream alive,
    // then reports the timeout as an in-stream error event.
    const streamed = await post(`${s.gateway.url}/v1/messages`, { ...anthropicBody, stream: true }, key);
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).toContain(": keep-alive");
    const errorFrame = text.split("\n\n").find((f) => f.startsWith("event: error"));
    expect(JSON.parse(errorFrame!.split("data: ")[1]!)).toMatchObject({ type: "error", error: { type: expect.any(String) } });
    const calls = await s.calls(session.id);
    expect(calls.map((c) => c.error?.code)).toEqual(["engine_timeout", "engine_timeout"]);
  });
});

describe("recording", () => {
  test("recorded prompt ids are exactly the engine's tokenization and outputs match what it returned", async () => {
    const s = await stack();
    const session = await s.session();
    const body = { ...chatBody("Write a haiku."), tools: [], temperature: 0 };
    const res = await post(`${s.gateway.url}/v1/chat/completions`, body, { authorization: `Bearer ${session.token}` });
    expect(res.status).toBe(200);
    const [call] = await s.calls(session.id);
    const tokenized = (await (await post(`${s.engineUrl}/tokenize`, { model: ENGINE_MODEL, messages: body.messages, add_generation_prompt: true })).json()) as {
      tokens: number[];
    };
    expect(call!.prompt_ids).toEqual(tokenized.tokens);
    const detok = (await (await post(`${s.engineUrl}/detokenize`, { model: ENGINE_MODEL, tokens: call!.output_ids })).json()) as { prompt: string };
    const answer = ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
    expect(detok.prompt).toContain(answer);
    expect(call!.logprobs).toHaveLength(call!.output_ids!.length);
    expect(call!.engine_url).toBe(s.engineUrl);
  });

  test("concurrent calls of one session finishing out of order get distinct seqs and read back intact", async () => {
    // The first call (seq 0) is engine call 1, which hangs until its client leaves: every later
    // call is answered and stored before it, however fast or slow the machine is.
    const s = await stack({ engine: { hangCalls: [1] } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const first = new AbortController();
    const hung = fetch(`${s.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...key },
      body: JSON.stringify({ ...chatBody("sub-agent 0"), max_tokens: 16 }),
      signal: first.signal,
    }).catch((e: unknown) => e);
    while (s.engine.calls < 1) await Bun.sleep(10); // call 0 is at the engine

    const bodies = Array.from({ length: 7 }, (_, i) => ({ ...chatBody(`sub-agent ${i + 1}`), max_tokens: 14 - 2 * i }));
    const statuses = await Promise.all(bodies.map((body) => post(`${s.gateway.url}/v1/chat/completions`, body, key).then((r) => r.status)));
    expect(statuses).toEqual(Array(7).fill(200));
    expect((await s.calls(session.id)).map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]); // stored before seq 0

    first.abort();
    await hung;
    let calls = await s.calls(session.id);
    while (calls.length < 8) {
      await Bun.sleep(10); // the aborted call is recorded once the gateway sees its client gone
      calls = await s.calls(session.id);
    }
    expect(calls.map((c) => c.seq)).toEqual([...Array(8).keys()]);
    expect(new Set(calls.map((c) => c.request.messages.at(-1)!.content)).size).toBe(8);
    expect(calls[0]!.error).not.toBeNull();
    for (const c of calls.slice(1)) expect(c.output_ids!.length).toBe(c.request.sampling.max_tokens!);
  });

  test("a gateway restart keeps every recorded call, and new calls continue the sequence", async () => {
    const first = await stack();
    const session = await first.session();
    const key = { authorization: `Bearer ${session.token}` };
    for (let i = 0; i < 3; i++) expect((await post(`${first.gateway.url}/v1/chat/completions`, chatBody(`turn ${i}`), key)).status).toBe(200);
    const before = await first.calls(session.id);
    await first.stopGateway();

    const second = await stack({ db: first.dbPath });
    const after = await second.calls(session.id);
    expect(after).toEqual(before);
    expect((await post(`${second.gateway.url}/v1/chat/completions`, chatBody("turn 3"), key)).status).toBe(200);
    expect((await second.calls(session.id)).map((c: RecordedCall) => c.seq)).toEqual([0, 1, 2, 3]);
  });

  test("pause drains in-flight calls, holds new ones, and resume stamps the new policy version", async () => {
    // The in-flight call is engine call 1, which hangs until its client leaves: the pause is
    // seen waiting for it however fast or slow the machine is.
    const s = await stack({ engine: { hangCalls: [1] } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const state = async () => AdminState.parse(await (await s.admin("/v1/admin/state")).json());
    const until = async (ok: (st: AdminState) => boolean) => {
      while (!ok(await state())) await Bun.sleep(10);
    };

    const client = new AbortController();
    const inFlight = fetch(`${s.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...key },
      body: JSON.stringify(chatBody("first")),
      signal: client.signal,
    }).catch((e: unknown) => e);
    while (s.engine.calls < 1) await Bun.sleep(10);
    let pauseReturned = false;
    const paused = s.admin("/v1/admin/pause", { method: "POST" }).then((r) => {
      pauseReturned = true;
      return r;
    });
    await until((st) => st.paused && st.in_flight === 1);
    expect(pauseReturned).toBe(false); // still draining
    client.abort();
    await inFlight;
    // Pause returned only after the in-flight call finished and was stored.
    expect(AdminState.parse(await (await paused).json())).toMatchObject({ paused: true, in_flight: 0 });
    expect(await s.calls(session.id)).toHaveLength(1);

    const held = post(`${s.gateway.url}/v1/chat/completions`, chatBody("second"), key);
    await until((st) => st.waiting === 1); // waiting, not failed
    expect(await state()).toMatchObject({ paused: true, in_flight: 0, waiting: 1 });
    const resumed = await s.admin("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: 7 }) });
    expect(await resumed.json()).toMatchObject({ paused: false, policy_version: 7 });
    expect((await held).status).toBe(200);
    expect((await s.calls(session.id)).map((c) => c.policy_version)).toEqual([0, 7]);

    const badResume = await s.admin("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: -1 }) });
    expect(badResume.status).toBe(400);
  });
});

describe("trainer sampling policy", () => {
  test("max_tokens is capped, temperature and thinking forced; the recorded request shows what the engine got", async () => {
    const s = await stack({ gateway: { maxTokensCap: 48, temperature: 1, thinking: false } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    expect((await post(`${s.gateway.url}/v1/chat/completions`, { ...chatBody(), max_tokens: 32000, temperature: 0.2 }, key)).status).toBe(200);
    expect((await post(`${s.gateway.url}/v1/messages`, { ...anthropicBody, max_tokens: 16 }, key)).status).toBe(200);
    const calls = await s.calls(session.id);
    expect(calls.map((c) => c.request.sampling)).toEqual([
      { max_tokens: 48, temperature: 1 },
      { max_tokens: 16, temperature: 1 },
    ]);
    // Thinking forced off: the engine rendered the empty think block into the generation prompt.
    expect(calls.map((c) => c.request.thinking)).toEqual([false, false]);
    const thinkStart = 151667;
    for (const c of calls) expect(c.prompt_ids!.slice(-4)[0]).toBe(thinkStart);
  });
});

describe("models", () => {
  test("GET /v1/models answers the OpenAI and the Anthropic SDK each in its own shape", async () => {
    const s = await stack();
    const session = await s.session();
    const openai = new OpenAI({ apiKey: session.token, baseURL: `${s.gateway.url}/v1`, maxRetries: 0 });
    const openaiModels = [];
    for await (const m of openai.models.list()) openaiModels.push(m.id);
    expect(openaiModels).toEqual([ENGINE_MODEL]);
    const anthropic = new Anthropic({ apiKey: session.token, baseURL: s.gateway.url, maxRetries: 0 });
    const anthropicModels = [];
    for await (const m of anthropic.models.list()) anthropicModels.push([m.type, m.id]);
    expect(anthropicModels).toEqual([["model", ENGINE_MODEL]]);
    const anonymous = await fetch(`${s.gateway.url}/v1/models`);
    expect(anonymous.status).toBe(401);
  });
});

describe("count_tokens", () => {
  test("with a configured tokenizer it is exact: the engine's own prompt token count", async () => {
    const s = await stack({ gateway: { tokenizer: defaultModelFolderPath() } });
    const session = await s.session();
    const body = { model: "m", system: "You are terse.", messages: [{ role: "user", content: "Count me, please." }] };
    const res = await post(`${s.gateway.url}/v1/messages/count_tokens`, body, { "x-api-key": session.token });
    expect(res.status).toBe(200);
    const { input_tokens } = (await res.json()) as { input_tokens: number };
    const messages = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Count me, please." },
    ];
    const engine = (await (await post(`${s.engineUrl}/tokenize`, { model: ENGINE_MODEL, messages, add_generation_prompt: true })).json()) as { count: number };
    expect(input_tokens).toBe(engine.count);
    // Counting is not a call: nothing is recorded.
    expect(await s.calls(session.id)).toHaveLength(0);
  });
});

describe("limits", () => {
  test("a body over the size limit gets a 413 in the dialect's shape, and the server stays up", async () => {
    const s = await stack({ gateway: { maxBodyBytes: 2048 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const big = await post(`${s.gateway.url}/v1/chat/completions`, chatBody("x".repeat(4096)), key);
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { message: string } }).error.message).toContain("exceeds 2048 bytes");
    const bigAnthropic = await post(`${s.gateway.url}/v1/messages`, { ...anthropicBody, system: "x".repeat(4096) }, key);
    expect(bigAnthropic.status).toBe(413);
    expect(await bigAnthropic.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
    expect((await post(`${s.gateway.url}/v1/chat/completions`, chatBody(), key)).status).toBe(200);
  });
});
