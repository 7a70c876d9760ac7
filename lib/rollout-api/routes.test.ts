// The shared routes over a port whose every method is scripted here: what the routes themselves
// decide — 500s as `{detail}`, the cancel memory and its race with a submit in flight, FastAPI's
// query-bool words — independent of either service.
import { describe, expect, test } from "bun:test";
import { TaskCatalog } from "../task-catalog.ts";
import { CancelledIds } from "./cancelled-ids.ts";
import type { RolloutApiPort } from "./port.ts";
import { rolloutApiRoutes } from "./routes.ts";

const OPEN = { open: true } as const;
import { taskStatus } from "./task-status.ts";

const body = { task_id: "t1", instruction: "i", agent: { harness: "mini" }, evaluator: { strategy: "none" } };

function port(overrides: Partial<RolloutApiPort> = {}): RolloutApiPort & { cancelled: string[] } {
  const cancelled: string[] = [];
  return {
    cancelled,
    refusal: () => null,
    submit: async () => ({ accepted: true }),
    status: async () => undefined,
    cancel: async (id) => {
      cancelled.push(id);
      return undefined;
    },
    serviceStatus: async () => ({ status: "ok" }),
    ...overrides,
  };
}

const post = (app: ReturnType<typeof rolloutApiRoutes>, payload: unknown) =>
  app.request("/rollout/task/submit", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) });

describe("the shared rollout routes", () => {
  test("a port that throws is a 500 `{detail}`, never plain text", async () => {
    const app = rolloutApiRoutes(
      port({
        submit: async () => {
          throw new Error("SQLITE_FULL: database or disk is full");
        },
        status: async () => {
          throw new RangeError("Maximum call stack size exceeded");
        },
      }),
      { access: OPEN, catalog: TaskCatalog.empty() },
    );
    const submitted = await post(app, body);
    expect(submitted.status).toBe(500);
    expect(await submitted.json()).toEqual({ detail: "internal error" });
    const status = await app.request("/rollout/task/t1");
    expect([status.status, await status.json()]).toEqual([500, { detail: "internal error" }]);
  });

  test("a DELETE ?register_if_missing that lands while the submit is being stored wins: the task is stopped and the submit refused", async () => {
    const memory = new CancelledIds();
    let app: ReturnType<typeof rolloutApiRoutes>;
    const p = port({
      submit: async () => {
        await app.request("/rollout/task/t1?register_if_missing=true", { method: "DELETE" });
        return { accepted: true };
      },
    });
    app = rolloutApiRoutes(p, { access: OPEN, catalog: TaskCatalog.empty(), cancelledIds: memory });
    const res = await post(app, body);
    expect(res.status).toBe(409);
    expect(p.cancelled).toEqual(["t1", "t1"]);
  });

  test("the cancel memory lasts its period, then the id is free again", async () => {
    let now = 0;
    const memory = new CancelledIds(300_000, () => now);
    const app = rolloutApiRoutes(port(), { access: OPEN, catalog: TaskCatalog.empty(), cancelledIds: memory });
    await app.request("/rollout/task/t1?register_if_missing=1", { method: "DELETE" });
    expect((await post(app, body)).status).toBe(409);
    now = 300_001;
    expect((await post(app, body)).status).toBe(200);
  });

  test("register_if_missing is read as FastAPI reads a bool query parameter", async () => {
    const app = rolloutApiRoutes(port(), { access: OPEN, catalog: TaskCatalog.empty() });
    const bad = await app.request("/rollout/task/t1?register_if_missing=maybe", { method: "DELETE" });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { type: string; loc: string[] }[] }).detail[0]).toMatchObject({
      type: "bool_parsing",
      loc: ["query", "register_if_missing"],
    });
    expect((await app.request("/rollout/task/t1?register_if_missing=yes", { method: "DELETE" })).status).toBe(200);
  });

  test("status words: completed once every session ended, whatever its status", () => {
    const error = {
      session_id: "s",
      task_id: "t",
      status: "ERROR" as const,
      trajectory: { status: "ERROR" as const, traces: [], metadata: {}, error: "x" },
      timing: {} as never,
      node_id: null,
      error: "x",
      metadata: {},
    };
    expect(taskStatus("t", "running", 2, [error]).status).toBe("running");
    expect(taskStatus("t", "running", 2, [error, error])).toMatchObject({ status: "completed", total_sessions: 2, completed_sessions: 2 });
    expect(taskStatus("t", "cancelled", 2, [error]).status).toBe("cancelled");
  });
});
