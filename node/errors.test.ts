import { describe, expect, test } from "bun:test";
import { PolarError, asPolarError, describeCause } from "./errors.ts";

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
