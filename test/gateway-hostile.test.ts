// Hostile and unlucky input over real HTTP (gateway on port 0, the real mock engine): bodies
// nested too deep or too large (declared or chunked), engine 4xx, a session deleted mid-call,
// out-of-order resumes, clients that hang up, and the structured log of each failure.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { AdminState } from "../protocol/admin.ts";
import { stackPerTest, type Stack } from "./helpers/stack.ts";

const stack = stackPerTest();

const chatBody = (content = "Say hi.") => ({ model: "m", messages: [{ role: "user", content }], max_tokens: 16 });
const anthropicBody = { model: "m", max_tokens: 16, messages: [{ role: "user", content: "Say hi." }] };
const responsesBody = { model: "m", input: "Say hi." };

function post(url: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body, duplex: "half", signal } as RequestInit);
}

/** JSON text of an object nested `depth` levels below `{"a":…}` wrappers. */
const nestedJson = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** A chunked body (no content-length) of `bytes` bytes of JSON-ish filler. */
function chunkedBody(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const n = Math.min(chunk.length, bytes - sent);
      sent += n;
      controller.enqueue(chunk.subarray(0, n));
    },
  });
}

describe("nesting depth", () => {
  test("a body nested 50,000 deep is refused with the dialect's 400 before any work; nothing recorded, /health answers", async () => {
    const s = await stack();
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const tool = (parameters: string) => `[{"type":"function","function":{"name":"f","parameters":${parameters}}}]`;
    const deepChat = `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":${tool(nestedJson(50_000))}}`;
    const [chat, health] = await Promise.all([post(`${s.gateway.url}/v1/chat/completions`, deepChat, key), fetch(`${s.gateway.url}/health`)]);
    expect(health.status).toBe(200);
    expect(chat.status).toBe(400);
    const chatError = ((await chat.json()) as { error: { type: string; message: string } }).error;
    expect(chatError.type).toBe("invalid_request_error");
    expect(chatError.message).toContain("deeper than 256");

    const deepAnthropic = `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${nestedJson(50_000)}}]}`;
    const anthropic = await post(`${s.gateway.url}/v1/messages`, deepAnthropic, key);
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });

    const responses = await post(`${s.gateway.url}/v1/responses`, `{"model":"m","input":"hi","metadata":${nestedJson(50_000)}}`, key);
    expect(responses.status).toBe(400);
    expect(await responses.json()).toMatchObject({ error: { type: "invalid_request_error" } });

    // Nothing reached the engine or the store, and no seq was spent: the next call is seq 0.
    expect(s.engine.calls).toBe(0);
    expect(await s.calls(session.id)).toHaveLength(0);
    expect((await post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify(chatBody()), key)).status).toBe(200);
    expect((await s.calls(session.id)).map((c) => c.seq)).toEqual([0]);
  }, 120_000);

  test("session metadata nested too deep is a 400, and a real schema's depth passes", async () => {
    const s = await stack();
    const deep = await s.admin("/v1/sessions", { method: "POST", body: `{"metadata":${nestedJson(50_000)}}` });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "bad_request" });
    const fine = await s.admin("/v1/sessions", { method: "POST", body: `{"metadata":${nestedJson(200)}}` });
    expect(fine.status).toBe(201);
  }, 120_000);
});

describe("body size", () => {
  test("bodies over the limit get the dialect's 413 at any size, declared or chunked", async () => {
    const s = await stack({ gateway: { maxBodyBytes: 2048 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    for (const size of [4096, 1024 * 1024]) {
      const chat = await post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify(chatBody("x".repeat(size))), key);
      expect(chat.status).toBe(413);
      expect(await chat.json()).toMatchObject({ error: { code: "request_too_large", message: "request body exceeds 2048 bytes" } });
      const anthropic = await post(`${s.gateway.url}/v1/messages`, JSON.stringify({ ...anthropicBody, system: "x".repeat(size) }), key);
      expect(anthropic.status).toBe(413);
      expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
    }
    const chunked = await post(`${s.gateway.url}/v1/responses`, chunkedBody(1024 * 1024), key);
    expect(chunked.status).toBe(413);
    expect(await chunked.json()).toMatchObject({ error: { code: "request_too_large" } });
    // A chunked body under the limit is read as usual.
    const small = new Blob([JSON.stringify(responsesBody)]).stream();
    expect((await post(`${s.gateway.url}/v1/responses`, small, key)).status).toBe(200);
    expect(s.engine.calls).toBe(1);
  }, 120_000);

  test("with the default 32 MiB limit, a 40 MiB body and a chunked 33.6 MB body get the dialect's 413", async () => {
    const s = await stack();
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const declared = await post(`${s.gateway.url}/v1/messages`, JSON.stringify({ ...anthropicBody, system: "x".repeat(40 * 1024 * 1024) }), key);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ type: "error", error: { type: "request_too_large", message: "request body exceeds 33554432 bytes" } });
    const chunked = await post(`${s.gateway.url}/v1/chat/completions`, chunkedBody(33_600_000), key);
    expect(chunked.status).toBe(413);
    expect(await chunked.json()).toMatchObject({ error: { code: "request_too_large" } });
    expect(s.engine.calls).toBe(0);
  }, 120_000);
});

/** Polls until `ok` holds (no deadline of its own: the test's timeout bounds it). */
async function until(ok: () => Promise<boolean>): Promise<void> {
  while (!(await ok())) await Bun.sleep(10);
}

const inFlight = async (s: Stack) => AdminState.parse(await (await s.admin("/v1/admin/state")).json()).in_flight;

describe("client hang-up", () => {
  test("a client that hangs up mid-call is recorded as client_closed, not internal", async () => {
    const s = await stack({ engine: { ttftMs: 60_000 } });
    const session = await s.session();
    const client = new AbortController();
    const call = post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify(chatBody()), { authorization: `Bearer ${session.token}` }, client.signal);
    await until(async () => (await inFlight(s)) === 1);
    client.abort();
    await expect(call).rejects.toThrow();
    await until(async () => (await s.calls(session.id)).length === 1);
    const [recorded] = await s.calls(session.id);
    expect(recorded!.error).toEqual({ code: "client_closed", message: "the client closed the connection before the engine answered" });
  }, 120_000);

  test("a client that hangs up while the gateway is paused is logged as client_closed and never recorded", async () => {
    const lines: string[] = [];
    const s = await stack({ log: (line) => lines.push(line) });
    const session = await s.session();
    expect((await s.admin("/v1/admin/pause", { method: "POST" })).status).toBe(200);
    const client = new AbortController();
    const call = post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify(chatBody()), { authorization: `Bearer ${session.token}` }, client.signal);
    await until(async () => ((await (await s.admin("/v1/admin/state")).json()) as { waiting: number }).waiting === 1);
    client.abort();
    await expect(call).rejects.toThrow();
    await until(async () => lines.length === 1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: "call failed", status: 499, code: "client_closed", session_id: session.id });
    expect(await s.calls(session.id)).toHaveLength(0);
  }, 120_000);
});

describe("weight-sync order", () => {
  test("resume with a lower policy version is refused with 409 and leaves the gate as it was; the same version again is fine", async () => {
    const s = await stack();
    const resume = (version: number) => s.admin("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: version }) });
    expect(await (await resume(5)).json()).toMatchObject({ policy_version: 5, paused: false });
    expect((await s.admin("/v1/admin/pause", { method: "POST" })).status).toBe(200);
    const older = await resume(4);
    expect(older.status).toBe(409);
    expect(((await older.json()) as { error: { code: string; message: string } }).error).toEqual({
      code: "conflict",
      message: "policy_version 4 is older than the current 5; versions only move forward",
    });
    expect(await (await s.admin("/v1/admin/state")).json()).toMatchObject({ paused: true, policy_version: 5 });
    expect(await (await resume(5)).json()).toMatchObject({ policy_version: 5, paused: false });
  }, 120_000);
});

describe("input the engine cannot process", () => {
  test("engine 4xx are the client's fault: no retry, a 400 in the dialect's shape (33 MB string, schema nested 10,000 deep)", async () => {
    // The depth limit is raised so the deep schema reaches the engine; retries would be spent on a 5xx.
    const s = await stack({ gateway: { maxJsonDepth: 30_000 }, backendOptions: { retries: 2, backoffMs: 1 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    let schema = '{"type":"string"}';
    for (let i = 0; i < 10_000; i++) schema = `{"type":"object","properties":{"a":${schema}}}`;
    const deep = `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`;
    const chat = await post(`${s.gateway.url}/v1/chat/completions`, deep, key);
    expect(chat.status).toBe(400);
    const chatError = ((await chat.json()) as { error: { type: string; message: string } }).error;
    expect(chatError.type).toBe("invalid_request_error");
    expect(chatError.message).toStartWith("The chat template could not be applied to the request");

    const huge = JSON.stringify({ ...anthropicBody, messages: [{ role: "user", content: "x".repeat(33_000_000) }] });
    const anthropic = await post(`${s.gateway.url}/v1/messages`, huge, key);
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/^The (tokenizer|chat template) could not/) },
    });
    // One engine request per call: nothing was retried.
    expect(s.engine.requests.filter((r) => r.startsWith("POST /v1/chat/completions"))).toHaveLength(2);
    expect((await s.calls(session.id)).map((c) => c.error?.code)).toEqual(["bad_request", "bad_request"]);
  }, 120_000);

  test("with the tito backend the gateway's own template and tokenizer refuse such input the same way", async () => {
    const s = await stack({ backend: "tito", backendOptions: { retries: 2, backoffMs: 1 } });
    const session = await s.session();
    const word = JSON.stringify(chatBody("x".repeat(1_000_000)));
    const res = await post(`${s.gateway.url}/v1/chat/completions`, word, { authorization: `Bearer ${session.token}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: "the chat template or tokenizer could not process the request", type: "invalid_request_error", param: null, code: null },
    });
    expect(s.engine.requests.filter((r) => r.startsWith("POST"))).toEqual([]);
  }, 120_000);
});

describe("a session deleted while its call is in flight", () => {
  test("the call gets a 404 that says so in its dialect's shape, carries no SQL or internals, and is not stored", async () => {
    const s = await stack({ engine: { ttftMs: 1_500 } });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const chat = post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify(chatBody("a secret prompt")), key);
    const anthropic = post(`${s.gateway.url}/v1/messages`, JSON.stringify({ ...anthropicBody, stream: true }), key);
    await until(async () => (await inFlight(s)) === 2);
    expect((await s.admin(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);

    const wanted = `session ${session.id} was deleted while this call was in flight; the call was not recorded`;
    const chatRes = await chat;
    expect(chatRes.status).toBe(404);
    const chatText = await chatRes.text();
    expect(JSON.parse(chatText)).toEqual({ error: { message: wanted, type: "invalid_request_error", param: null, code: "not_found" } });
    const anthropicRes = await anthropic;
    expect(anthropicRes.status).toBe(404);
    const anthropicText = await anthropicRes.text();
    expect(JSON.parse(anthropicText)).toEqual({ type: "error", error: { type: "not_found_error", message: wanted } });
    for (const text of [chatText, anthropicText]) {
      expect(text).not.toMatch(/insert|params|secret prompt|127\.0\.0\.1|\bat \//i);
    }
    // Nothing was stored (the database file itself has no row), and the session is gone.
    const db = new Database(s.dbPath, { readonly: true });
    expect(db.query("select count(*) as n from calls where session_id = ?").get(session.id)).toEqual({ n: 0 });
    db.close();
    expect((await s.admin(`/v1/sessions/${session.id}/calls`)).status).toBe(404);
    expect(await inFlight(s)).toBe(0);
  }, 120_000);
});

describe("structured logs", () => {
  test("one JSON line per failed call and per 5xx, with the request id the client got; never a prompt, a token or a session key", async () => {
    const lines: string[] = [];
    const s = await stack({
      engine: { failFirst: 1, hangCalls: [3] },
      backendOptions: { timeoutMs: 500 },
      gateway: { streamHeadStartMs: 100, keepAliveMs: 50 },
      log: (line) => lines.push(line),
    });
    const session = await s.session();
    const key = { authorization: `Bearer ${session.token}` };
    const secret = "SECRET-PROMPT-TEXT";
    const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

    // An engine 5xx: one error line naming the engine, the session and the dialect.
    const failed = await post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify(chatBody(secret)), key);
    expect(failed.status).toBe(502);
    const failedId = failed.headers.get("x-request-id")!;
    expect(failedId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(parsed()).toEqual([
      {
        ts: expect.any(String),
        level: "error",
        msg: "call failed",
        request_id: failedId,
        method: "POST",
        path: "/v1/chat/completions",
        status: 502,
        code: "engine_unavailable",
        message: expect.stringMatching(/^engine 500: /),
        session_id: session.id,
        dialect: "chat",
        duration_ms: expect.any(Number),
        engine: { url: s.engineUrl, status: 500, attempts: 1 },
      },
    ]);

    // A call that works logs nothing, but still carries its id; a client's own id is kept.
    const ok = await post(`${session.openai_base_url}/chat/completions`, JSON.stringify(chatBody(secret)), { "x-request-id": "harness-42" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toBe("harness-42");
    expect(lines).toHaveLength(1);

    // A streamed call that fails after its 200 went out is logged when it fails, path redacted.
    const streamed = await post(`${session.anthropic_base_url}/v1/messages`, JSON.stringify({ ...anthropicBody, stream: true, system: secret }), {
      "x-request-id": "harness-43",
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("x-request-id")).toBe("harness-43");
    await streamed.text();
    await until(async () => lines.length === 2);
    expect(parsed()[1]).toMatchObject({
      level: "error",
      request_id: "harness-43",
      path: "/s/:token/v1/messages",
      status: 200,
      in_stream: true,
      code: "engine_timeout",
      dialect: "anthropic",
      session_id: session.id,
    });

    // A 4xx call failure (unknown key) is a warn line; an admin 404 is not a call and not a 5xx.
    const unknown = await post(`${s.gateway.url}/v1/messages`, JSON.stringify(anthropicBody), { "x-api-key": "pl-unknown" });
    expect(unknown.status).toBe(401);
    expect((await s.admin("/v1/sessions/ses_nope")).status).toBe(404);
    expect(parsed().slice(2)).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: "call failed",
        request_id: unknown.headers.get("x-request-id"),
        status: 401,
        code: "unauthorized",
        dialect: "anthropic",
      }),
    ]);
    for (const line of lines) {
      expect(line).not.toContain(secret);
      expect(line).not.toContain(session.token);
      expect(line).not.toMatch(/prompt_ids|output_ids|logprobs/);
    }
  }, 120_000);

  test("a 5xx outside a call is logged too, and the client never sees the engine's address", async () => {
    const lines: string[] = [];
    const s = await stack({ log: (line) => lines.push(line) });
    const session = await s.session();
    await s.engine.stop();
    const models = await fetch(`${s.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${session.token}` } });
    expect(models.status).toBe(502);
    const body = await models.text();
    expect(JSON.parse(body)).toEqual({
      error: { message: "no engine reachable after 1 attempts", type: "server_error", param: null, code: "engine_unavailable" },
    });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "server error",
        request_id: models.headers.get("x-request-id"),
        path: "/v1/models",
        status: 502,
        engine: { url: s.engineUrl },
      }),
    ]);
  }, 120_000);
});

describe("memory bounded in bytes", () => {
  test("all per-session caches share one byte budget; evicted sessions still record exact prompts", async () => {
    const maxBytes = 64 * 1024;
    const s = await stack({ gateway: { cacheBytes: maxBytes } });
    const sessions = await Promise.all(Array.from({ length: 8 }, () => s.session()));
    const history = sessions.map((_, i) => [{ role: "user", content: `Session ${i} reads a file:\n${"line of source code\n".repeat(400)}` }]);
    const cache = async () => AdminState.parse(await (await s.admin("/v1/admin/state")).json()).cache;
    // Round-robin turns: every session's cached recent calls are evicted before its next call.
    for (let turn = 0; turn < 3; turn++) {
      for (const [i, session] of sessions.entries()) {
        const res = await post(`${s.gateway.url}/v1/chat/completions`, JSON.stringify({ model: "m", messages: history[i], max_tokens: 16 }), {
          authorization: `Bearer ${session.token}`,
        });
        expect(res.status).toBe(200);
        const answer = ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
        history[i]!.push({ role: "assistant", content: answer }, { role: "user", content: `turn ${turn} done, go on` });
        const state = await cache();
        expect(state.max_bytes).toBe(maxBytes);
        expect(state.used_bytes).toBeLessThanOrEqual(maxBytes);
      }
    }
    expect((await cache()).entries).toBeGreaterThan(0);
    for (const session of sessions.slice(0, 2)) {
      const calls = await s.calls(session.id);
      expect(calls.map((c) => c.seq)).toEqual([0, 1, 2]);
      const last = calls.at(-1)!;
      const tokenized = (await (
        await post(`${s.engineUrl}/tokenize`, JSON.stringify({ model: "Qwen/Qwen3-8B", messages: last.request.messages, add_generation_prompt: true }))
      ).json()) as { tokens: number[] };
      expect(last.prompt_ids).toEqual(tokenized.tokens);
    }
  }, 120_000);
});
