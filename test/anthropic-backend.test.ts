// The anthropic backend against a real Anthropic-compatible server: a Polar gateway (its Messages
// dialect) with the mock engine behind it, reached through a recording relay that shows the
// headers the backend sent. A tool loop completes; calls are text only (no token ids).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBackend } from "../node/gateway/backends/index.ts";
import { ANTHROPIC_VERSION } from "../node/gateway/backends/anthropic.ts";
import { assistantMessage, call, chatRequest } from "./support/gateway/backend-fixtures.ts";
import { ENGINE_MODEL, startStack, type Stack } from "./helpers/stack.ts";

let stack: Stack;
let relay: ReturnType<typeof Bun.serve>;
const seen: { path: string; headers: Record<string, string> }[] = [];

beforeAll(async () => {
  stack = await startStack({
    engine: {
      script: {
        steps: [
          { think: "plan", shell: "echo hello > out.txt" },
          { think: "done", text: "Done." },
        ],
      },
    },
  });
  relay = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      seen.push({ path: url.pathname, headers: Object.fromEntries(req.headers) });
      return fetch(`${stack.gateway.url}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === "GET" ? undefined : await req.text(),
      });
    },
  });
});
afterAll(async () => {
  relay.stop(true);
  await stack.stop();
});

describe("anthropic backend against a Polar gateway's Messages API", () => {
  test("a tool loop: tool call, tool result back, final text; the key in x-api-key with anthropic-version, calls text only", async () => {
    const session = await stack.session();
    const backend = createBackend("anthropic", { urls: [`http://127.0.0.1:${relay.port}`], apiKey: session.token, retries: 0 });
    const first = await call(backend, chatRequest([{ role: "user", content: "make out.txt" }], { model: ENGINE_MODEL }));
    expect(first.tokens).toBeNull();
    expect(first.notes).toEqual({ text_only: true });
    expect(first.response.finish_reason).toBe("tool_calls");
    const toolCall = first.response.tool_calls[0]!;
    expect(JSON.parse(toolCall.arguments)).toEqual({ command: "echo hello > out.txt" });
    expect(first.response.usage.prompt_tokens).toBeGreaterThan(0);

    const second = await call(
      backend,
      chatRequest(
        [{ role: "user", content: "make out.txt" }, assistantMessage(first.response), { role: "tool", content: "exit code 0", tool_call_id: toolCall.id }],
        { model: ENGINE_MODEL },
      ),
    );
    expect(second.response).toMatchObject({ finish_reason: "stop", tool_calls: [] });
    expect(second.response.content.trim()).toBe("Done.");
    expect(second.response.reasoning?.trim()).toBe("done");

    const messages = seen.filter((s) => s.path === "/v1/messages");
    expect(messages).toHaveLength(2);
    for (const s of messages) {
      expect(s.headers["x-api-key"]).toBe(session.token);
      expect(s.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
      expect(s.headers.authorization).toBeUndefined();
    }
    // The server saw a Messages conversation: its own record of the calls is in the anthropic dialect.
    const recorded = await stack.calls(session.id);
    expect(recorded.map((c) => c.dialect)).toEqual(["anthropic", "anthropic"]);
    expect(recorded[1]!.request.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  test("listModels asks the server's /v1/models with the same headers", async () => {
    const session = await stack.session();
    const backend = createBackend("anthropic", { urls: [`http://127.0.0.1:${relay.port}`], apiKey: session.token, retries: 0 });
    expect(await backend.listModels()).toContain(ENGINE_MODEL);
    expect(seen.at(-1)).toMatchObject({ path: "/v1/models", headers: { "x-api-key": session.token, "anthropic-version": ANTHROPIC_VERSION } });
    expect(await createBackend("anthropic", { urls: [`http://127.0.0.1:${relay.port}`], model: "claude-teacher" }).listModels()).toEqual(["claude-teacher"]);
  });
});
