// The --accept grammar: precedence, both spellings of the operators, absent values, and errors
// that name what is wrong before any rollout runs — and nothing in it is ever evaluated as code.
import { describe, expect, test } from "bun:test";
import { AcceptError, parseAccept, type AcceptFacts } from "./accept.ts";

const facts = (over: AcceptFacts = {}): AcceptFacts => ({
  reward: 1,
  status: "COMPLETED",
  task_id: "exercism-python-bob",
  sample_index: 2,
  harness: "mini",
  turns: 4,
  traces: 1,
  tokens: 1200,
  exit_code: 0,
  agent_timed_out: false,
  duration_s: 12.5,
  "evaluation.status": "resolved",
  "fail_to_pass.passed": 26,
  "fail_to_pass.total": 26,
  "pass_to_pass.passed": 0,
  "pass_to_pass.total": 0,
  ...over,
});

const accepts = (expr: string, over: AcceptFacts = {}) => parseAccept(expr).accepts(facts(over));

function error(expr: string): string {
  try {
    parseAccept(expr);
  } catch (err) {
    if (err instanceof AcceptError) return err.message;
    throw err;
  }
  throw new Error(`"${expr}" parsed`);
}

describe("--accept expressions", () => {
  test("comparisons on numbers and strings, with or without spaces", () => {
    expect(accepts("reward>=1")).toBe(true);
    expect(accepts("reward >= 1", { reward: 0 })).toBe(false);
    expect(accepts("reward > 0.5 && turns <= 4")).toBe(true);
    expect(accepts("turns < 4")).toBe(false);
    expect(accepts('status == "COMPLETED"')).toBe(true);
    expect(accepts("status != 'ERROR'")).toBe(true);
    expect(accepts('evaluation.status == "resolved" and fail_to_pass.passed == fail_to_pass.total')).toBe(true);
    expect(accepts("duration_s < 1e2")).toBe(true);
  });

  test("and binds tighter than or; not and parentheses; booleans", () => {
    expect(accepts("reward >= 1 || turns > 10 && tokens > 1e9")).toBe(true);
    expect(accepts("(reward >= 1 || turns > 10) && tokens > 1e9")).toBe(false);
    expect(accepts("!agent_timed_out")).toBe(true);
    expect(accepts("not agent_timed_out and reward >= 1", { agent_timed_out: true })).toBe(false);
    expect(accepts("agent_timed_out == true", { agent_timed_out: true })).toBe(true);
  });

  test("an absent value (no reward, no evaluation) fails every comparison except == null / != null", () => {
    expect(accepts("reward >= 0", { reward: null })).toBe(false);
    expect(accepts("reward < 1", { reward: null })).toBe(false);
    expect(accepts("reward == null", { reward: null })).toBe(true);
    expect(accepts("reward != null")).toBe(true);
    expect(accepts("tokens > 0 || reward >= 1", { tokens: null })).toBe(true);
  });

  test("errors name the problem: unknown fields, type mismatches, syntax, non-boolean results", () => {
    expect(error("rewrd >= 1")).toContain('unknown field "rewrd"');
    expect(error('reward >= "1"')).toContain('">=" compares numbers, not a string');
    expect(error("status == 1")).toContain("cannot compare a string with a number");
    expect(error("reward >=")).toContain("expected a value");
    expect(error("reward >= 1 )")).toContain('unexpected ")"');
    expect(error("(reward >= 1")).toContain('expected ")"');
    expect(error("reward")).toContain("needs a true/false value");
    expect(error("reward && turns")).toContain("needs a true/false value");
    expect(error("status == 'open")).toContain("unterminated string");
  });

  test("no code runs: JavaScript in the expression is a syntax error, not evaluated", () => {
    const g = globalThis as { polarAcceptRan?: boolean };
    for (const expr of [
      "globalThis.polarAcceptRan = true",
      "reward >= 1; process.exit(1)",
      "(() => 1)()",
      "constructor.constructor('return 1')()",
      "reward >= 1 + 1",
    ]) {
      expect(() => parseAccept(expr)).toThrow(AcceptError);
    }
    expect(g.polarAcceptRan).toBeUndefined();
  });
});
