import { describe, expect, test } from "bun:test";
import { AdminErrorBody, PolarError, WsErrorFrame, adminErrorResponse, asPolarError, describeCause, fastApiErrorResponse, wsErrorFrame } from "./errors.ts";

describe("asPolarError", () => {
  test("an unknown error becomes internal with a fixed message; its text never travels", () => {
    const sqlite = Object.assign(new Error("FOREIGN KEY constraint failed"), { code: "SQLITE_CONSTRAINT_FOREIGNKEY" });
    const drizzle = new Error('Failed query: insert into "calls" values (?, ?)\nparams: ses_1,{"messages":[{"content":"a secret prompt"}]}', { cause: sqlite });
    const err = asPolarError(drizzle);
    expect(err).toBeInstanceOf(PolarError);
    expect([err.code, err.status, err.message]).toEqual(["internal", 500, "internal error"]);
    const cause = describeCause(err.cause)!;
    expect(cause.name).toBe("Error");
    expect(cause.codes).toEqual(["SQLITE_CONSTRAINT_FOREIGNKEY"]);
    expect(JSON.stringify(cause)).not.toContain("secret prompt");
  });

  test("a PolarError passes through unchanged", () => {
    const err = new PolarError("conflict", "older version");
    expect(asPolarError(err)).toBe(err);
    expect(describeCause(undefined)).toBeUndefined();
  });
});

describe("PolarError transports", () => {
  test("each code has a status and a retryable flag; one mapping per transport", () => {
    const busy = new PolarError("overloaded", "try later");
    const bad = new PolarError("bad_request", "no such field");
    expect([busy.status, busy.retryable, bad.status, bad.retryable]).toEqual([529, true, 400, false]);
    expect(new PolarError("engine_timeout", "slow").retryable).toBe(true);
    expect(new PolarError("conflict", "older").retryable).toBe(false);
    expect(adminErrorResponse(bad)).toEqual({ body: { error: { code: "bad_request", message: "no such field" } }, status: 400 });
    expect(AdminErrorBody.strict().parse(adminErrorResponse(bad).body).error.code).toBe("bad_request");
    expect(WsErrorFrame.parse(wsErrorFrame(busy, "r1"))).toEqual({
      type: "error",
      code: "overloaded",
      message: "try later",
      retryable: true,
      request_id: "r1",
    });
    expect(wsErrorFrame(bad)).toEqual({ type: "error", code: "bad_request", message: "no such field", retryable: false });
    expect(fastApiErrorResponse(new PolarError("not_found", "unknown task t"))).toEqual({ body: { detail: "unknown task t" }, status: 404 });
  });
});
