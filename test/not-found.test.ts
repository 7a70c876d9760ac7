// Unknown paths answer 404 in the shape of the API they fall under: OpenAI's under /v1/chat/* and
// /v1/responses*, Anthropic's under /v1/messages*, the admin/JSON shape elsewhere — with and
// without the /s/<token>/ prefix — so each official SDK raises its own NotFoundError.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminErrorBody, AnthropicErrorBody, OpenAiErrorBody } from "../protocol/errors.ts";
import { createBackend } from "../node/gateway/backends/index.ts";
import { startGateway, type RunningGateway } from "../node/gateway/server.ts";

const ADMIN = "admin-token-for-not-found-tests";
let gateway: RunningGateway;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "polar-404-"));
  // No engine is ever called: every request here misses every route.
  gateway = await startGateway({ port: 0, db: join(dir, "gateway.db"), adminToken: ADMIN }, createBackend("vllm", { urls: ["http://127.0.0.1:9"] }));
});
afterAll(async () => {
  await gateway.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${gateway.url}${path}`, { headers });
  return { status: res.status, body: await res.json() };
}

describe("404 in the shape of the API a path falls under", () => {
  for (const prefix of ["", "/s/pl-some-token"]) {
    test.each(["/v1/chat/nope", "/v1/chat/completions/extra", "/v1/responses/resp_1/cancel", "/v1/responsesx"])(`OpenAI shape: ${prefix}%s`, async (path) => {
      const { status, body } = await get(`${prefix}${path}`);
      expect(status).toBe(404);
      const error = OpenAiErrorBody.strict().parse(body).error;
      expect(error).toMatchObject({ type: "invalid_request_error", code: "not_found" });
      expect(error.message).toContain(path);
      expect(error.message).not.toContain("pl-some-token");
    });

    test.each(["/v1/messages/batches", "/v1/messages/count_tokens/x"])(`Anthropic shape: ${prefix}%s`, async (path) => {
      const { status, body } = await get(`${prefix}${path}`);
      expect(status).toBe(404);
      const parsed = AnthropicErrorBody.strict().parse(body);
      expect(parsed.error.type).toBe("not_found_error");
      expect(parsed.error.message).not.toContain("pl-some-token");
    });
  }

  test("GET on a POST-only LLM endpoint is a 404 in that endpoint's shape", async () => {
    expect(OpenAiErrorBody.parse((await get("/v1/chat/completions")).body).error.code).toBe("not_found");
    expect(AnthropicErrorBody.parse((await get("/v1/messages")).body).error.type).toBe("not_found_error");
  });

  test("/v1/models/… follows the anthropic-version header, like /v1/models", async () => {
    expect(OpenAiErrorBody.parse((await get("/v1/models/m/x")).body).error.code).toBe("not_found");
    expect(AnthropicErrorBody.parse((await get("/v1/models/m/x", { "anthropic-version": "2023-06-01" })).body).error.type).toBe("not_found_error");
  });

  test.each(["/nope", "/v1/unknown", "/v1/admin/nope", "/v1/sessions/ses_x/nope"])("admin shape elsewhere: %s", async (path) => {
    const { status, body } = await get(path, { authorization: `Bearer ${ADMIN}` });
    expect(status).toBe(404);
    expect(AdminErrorBody.strict().parse(body).error.code).toBe("not_found");
  });

  test("the official SDKs raise their NotFoundError", async () => {
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: "pl-x", maxRetries: 0 });
    const openaiError = await openai.get("/chat/unknown").catch((e: unknown) => e);
    expect(openaiError).toBeInstanceOf(OpenAI.NotFoundError);
    expect((openaiError as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("not_found");

    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: "pl-x", maxRetries: 0 });
    const anthropicError = await anthropic.get("/v1/messages/unknown").catch((e: unknown) => e);
    expect(anthropicError).toBeInstanceOf(Anthropic.NotFoundError);
    expect((anthropicError as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});
