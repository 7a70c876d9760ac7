// Retry, deadline, connect-failure and routing policy, exercised through the vllm backend against
// real mock engines.
import { afterEach, describe, expect, test } from "bun:test";
import { PolarError } from "../../../protocol/errors.ts";
import { startMockEngine } from "../../mock-engine/index.ts";
import { createBackend } from "./index.ts";
import { call, chatRequest, refusedUrl } from "../../../test/support/gateway/backend-fixtures.ts";

type Engine = Awaited<ReturnType<typeof startMockEngine>>;
const engines: Engine[] = [];
async function engine(options: Parameters<typeof startMockEngine>[0] = {}): Promise<Engine> {
  const e = await startMockEngine({ port: 0, ...options });
  engines.push(e);
  return e;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

const hello = chatRequest([{ role: "user", content: "hello" }], { tools: [] });

async function failure(promise: Promise<unknown>): Promise<PolarError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof PolarError)) throw new Error(`expected a PolarError, got ${String(err)}`);
  return err;
}

describe("engine client policy", () => {
  test("retries recover from the first N engine 5xx answers", async () => {
    const e = await engine({ failFirst: 2 });
    const backend = createBackend("vllm", { urls: [e.url], retries: 2, backoffMs: 1 });
    const result = await call(backend, hello);
    expect(result.notes?.attempts).toBe(3);
    expect(result.tokens?.outputIds.length).toBeGreaterThan(0);
  });

  test("5xx beyond the retry budget ends in engine_unavailable", async () => {
    const e = await engine({ failFirst: 3 });
    const backend = createBackend("vllm", { urls: [e.url], retries: 1, backoffMs: 1 });
    const err = await failure(call(backend, hello));
    expect(err.code).toBe("engine_unavailable");
    expect(err.details).toMatchObject({ status: 500, attempts: 2 });
  });

  test("a hanging engine ends in engine_timeout", async () => {
    const e = await engine({ hangCalls: [1] });
    const backend = createBackend("vllm", { urls: [e.url], retries: 2, backoffMs: 1, timeoutMs: 300 });
    const err = await failure(call(backend, hello));
    expect(err.code).toBe("engine_timeout");
  });

  test("the caller's abort is passed through as its own reason, not a timeout", async () => {
    const e = await engine({ hangCalls: [1] });
    const backend = createBackend("vllm", { urls: [e.url], timeoutMs: 30_000 });
    const controller = new AbortController();
    const pending = backend.complete({ request: hello, sessionId: "s", signal: controller.signal });
    const reason = new Error("client went away");
    setTimeout(() => controller.abort(reason), 50);
    expect(
      await pending.then(
        () => undefined,
        (err: unknown) => err,
      ),
    ).toBe(reason);
  });

  test("refused connections after retries end in engine_unavailable", async () => {
    const backend = createBackend("vllm", { urls: [refusedUrl()], retries: 2, backoffMs: 1 });
    const err = await failure(call(backend, hello));
    expect(err.code).toBe("engine_unavailable");
    expect(err.message).toBe("no engine reachable after 3 attempts");
  });

  test("4xx answers are not retried, keep the engine's message and are the client's fault", async () => {
    const e = await engine();
    const backend = createBackend("vllm", { urls: [e.url], retries: 3, backoffMs: 1, model: "no-such-model" });
    const err = await failure(call(backend, hello));
    expect(err.code).toBe("bad_request");
    expect(err.message).toContain("no-such-model");
    expect(err.details).toMatchObject({ status: 404, attempts: 1 });
  });

  test("listing models routes no session: the first session still goes to the first engine", async () => {
    const [e1, e2] = [await engine(), await engine()];
    const backend = createBackend("vllm", { urls: [e1.url, e2.url] });
    expect(await backend.listModels()).toEqual(["Qwen/Qwen3-8B"]);
    expect(await backend.listModels()).toEqual(["Qwen/Qwen3-8B"]);
    expect((await call(backend, hello, "a")).engineUrl).toBe(e1.url);
    expect((await call(backend, hello, "b")).engineUrl).toBe(e2.url);
  });

  test("sessions stick to their engine and fail over when it stops", async () => {
    const [e1, e2] = [await engine(), await engine()];
    const backend = createBackend("vllm", { urls: [e1.url, e2.url], retries: 1, backoffMs: 1 });
    const first = await call(backend, hello, "a");
    const second = await call(backend, hello, "b");
    expect(first.engineUrl).toBe(e1.url);
    expect(second.engineUrl).toBe(e2.url); // both idle: the engine holding fewer sessions
    for (let i = 0; i < 3; i++) expect((await call(backend, hello, "a")).engineUrl).toBe(e1.url);

    await e1.stop();
    const moved = await call(backend, hello, "a");
    expect(moved.engineUrl).toBe(e2.url);
    expect(moved.notes?.attempts).toBe(2);
    // Later calls go straight to the new engine.
    expect((await call(backend, hello, "a")).notes?.attempts).toBeUndefined();
  });
});
