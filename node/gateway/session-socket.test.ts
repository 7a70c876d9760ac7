// A rollout's unix socket through the real gateway and mock engine: its own session's LLM calls
// pass and are recorded; other sessions' tokens, the admin token, the session API and the admin
// API are refused in each dialect's own error shape; closing the session closes the socket.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ADMIN_TOKEN, startStack, type Stack } from "../../test/helpers/stack.ts";
import type { OpenedSession, SessionService } from "./session-service.ts";

const OpenAiError = z.object({ error: z.object({ message: z.string(), type: z.string(), code: z.string().nullable() }) });
const AnthropicError = z.object({ type: z.literal("error"), error: z.object({ type: z.string(), message: z.string() }) });
const AdminError = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const ChatCompletion = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string() }) })) });

let stack: Stack;
let service: SessionService;
let dir: string;
let mine: OpenedSession;
let other: OpenedSession;

beforeAll(async () => {
  stack = await startStack({ engine: { script: { steps: [{ text: "hello from the socket" }] } } });
  service = stack.gateway.sessions;
  dir = await mkdtemp(join(tmpdir(), "polar-sock-"));
  mine = await service.open({ metadata: { rollout_id: "r-1" }, socketFolder: dir });
  other = await service.open({ metadata: { rollout_id: "r-2" } });
});
afterAll(async () => {
  await mine?.close();
  await other?.close();
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

function viaSocket(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", ...(init.key ? { authorization: `Bearer ${init.key}` } : {}) };
  return fetch(`http://sandbox${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) }, unix: mine.socket!.path });
}

const chatBody = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 16 });
const messagesBody = JSON.stringify({ model: "m", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });

test("the session's own token works on its socket, and the call is recorded in that session", async () => {
  expect(mine.socket?.path).toBe(join(dir, "gateway.sock"));
  const response = await viaSocket("/v1/chat/completions", { method: "POST", body: chatBody, key: mine.token });
  expect(response.status).toBe(200);
  expect(ChatCompletion.parse(await response.json()).choices[0]!.message.content.trim()).toBe("hello from the socket");
  const models = await viaSocket("/v1/models", { key: mine.token });
  expect(models.status).toBe(200);
  const calls = await stack.calls(mine.id);
  expect(calls.length).toBe(1);
  expect(calls[0]!.dialect).toBe("chat");
  expect(await stack.calls(other.id)).toEqual([]);
}, 60_000);

test("another session's token is refused, in the dialect's shape", async () => {
  const chat = await viaSocket("/v1/chat/completions", { method: "POST", body: chatBody, key: other.token });
  expect(chat.status).toBe(403);
  expect(OpenAiError.parse(await chat.json()).error.code).toBe("permission_denied");
  const anthropic = await viaSocket("/v1/messages", {
    method: "POST",
    body: messagesBody,
    headers: { "x-api-key": other.token, "anthropic-version": "2023-06-01" },
  });
  expect(anthropic.status).toBe(403);
  expect(AnthropicError.parse(await anthropic.json()).error.type).toBe("permission_error");
  const responses = await viaSocket("/v1/responses", { method: "POST", body: JSON.stringify({ model: "m", input: "hi" }), key: other.token });
  expect(responses.status).toBe(403);
  OpenAiError.parse(await responses.json());
  // The same token works over the gateway's TCP listener: the socket, not the token, refuses.
  const tcp = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
    method: "POST",
    body: chatBody,
    headers: { authorization: `Bearer ${other.token}`, "content-type": "application/json" },
  });
  expect(tcp.status).toBe(200);
  expect((await stack.calls(mine.id)).length).toBe(1);
}, 60_000);

test("a missing key is 401 and the admin token is no LLM key there", async () => {
  const missing = await viaSocket("/v1/chat/completions", { method: "POST", body: chatBody });
  expect(missing.status).toBe(401);
  expect(OpenAiError.parse(await missing.json()).error.code).toBe("invalid_api_key");
  const admin = await viaSocket("/v1/chat/completions", { method: "POST", body: chatBody, key: ADMIN_TOKEN });
  expect(admin.status).toBe(403);
  OpenAiError.parse(await admin.json());
});

test("the session API, the admin API, path tokens and other routes are refused", async () => {
  for (const [method, path] of [
    ["POST", "/v1/sessions"],
    ["GET", `/v1/sessions/${mine.id}/calls`],
    ["GET", "/v1/admin/state"],
    ["POST", "/v1/admin/pause"],
    ["POST", `/s/${other.token}/v1/chat/completions`],
    ["GET", "/health"],
  ] as const) {
    const response = await viaSocket(path, { method, key: ADMIN_TOKEN, ...(method === "POST" ? { body: "{}" } : {}) });
    expect(`${method} ${path} ${response.status}`).toBe(`${method} ${path} 403`);
    expect(AdminError.parse(await response.json()).error.code).toBe("forbidden");
  }
  const state = await stack.admin("/v1/admin/state");
  expect(z.object({ paused: z.boolean() }).parse(await state.json()).paused).toBe(false);
});

test("closing the session closes its socket and revokes its token", async () => {
  const folder = await mkdtemp(join(tmpdir(), "polar-sock-closing-"));
  const session = await service.open({ socketFolder: folder });
  expect(existsSync(join(folder, "gateway.sock"))).toBe(true);
  await session.close();
  expect(existsSync(join(folder, "gateway.sock"))).toBe(false);
  await rm(folder, { recursive: true, force: true });
  const tcp = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
    method: "POST",
    body: chatBody,
    headers: { authorization: `Bearer ${session.token}`, "content-type": "application/json" },
  });
  expect(tcp.status).toBe(401);
  await session.close(); // idempotent
});

test("a silent call longer than Bun's default 10 s idle timeout is not cut on the socket", async () => {
  const slow = await startStack({ engine: { script: { steps: [{ text: "slow" }] }, ttftMs: 12_000 }, backendOptions: { timeoutMs: 60_000 } });
  const slowDir = await mkdtemp(join(tmpdir(), "polar-sock-slow-"));
  const session = await slow.gateway.sessions.open({ socketFolder: slowDir });
  try {
    const response = await fetch("http://sandbox/v1/chat/completions", {
      method: "POST",
      body: chatBody,
      headers: { authorization: `Bearer ${session.token}`, "content-type": "application/json" },
      unix: session.socket!.path,
    });
    expect(response.status).toBe(200);
    expect(ChatCompletion.parse(await response.json()).choices[0]!.message.content.trim()).toBe("slow");
  } finally {
    await session.close();
    await slow.stop();
    await rm(slowDir, { recursive: true, force: true });
  }
}, 90_000);
