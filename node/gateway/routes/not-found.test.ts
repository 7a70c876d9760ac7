import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { AdminErrorBody, AnthropicErrorBody, OpenAiErrorBody } from "../../../protocol/errors.ts";
import { answerInPathShape } from "./not-found.ts";

/** An app whose routes let an unknown error escape, its text holding what must not reach a client. */
function leakyApp(): Hono {
  const app = new Hono();
  const leak = () => {
    throw new Error("INSERT INTO calls VALUES ('secret prompt')");
  };
  for (const path of ["/v1/chat/completions", "/s/:token/v1/messages", "/v1/admin/pause"]) app.post(path, leak);
  app.onError((err, c) => answerInPathShape(c, err));
  return app;
}

describe("an error a route lets escape", () => {
  test("is answered in the shape of the path's API, with a fixed message", async () => {
    const app = leakyApp();
    const chat = await app.request("/v1/chat/completions", { method: "POST" });
    expect(chat.status).toBe(500);
    expect(OpenAiErrorBody.parse(await chat.json()).error).toMatchObject({ type: "server_error", message: "internal error" });

    const messages = await app.request("/s/pl-token/v1/messages", { method: "POST" });
    expect(messages.status).toBe(500);
    expect(AnthropicErrorBody.parse(await messages.json()).error).toEqual({ type: "api_error", message: "internal error" });

    const admin = await app.request("/v1/admin/pause", { method: "POST" });
    expect(admin.status).toBe(500);
    expect(AdminErrorBody.parse(await admin.json()).error).toEqual({ code: "internal", message: "internal error" });
  });
});
