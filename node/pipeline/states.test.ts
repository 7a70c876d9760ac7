import { describe, expect, test } from "bun:test";
import { ROLLOUT_STATES, TERMINAL_STATES, TRANSITIONS, canTransition, isTerminal } from "./states.ts";

describe("rollout transition table", () => {
  test("the happy path runs QUEUED → INIT → READY → RUN → POSTRUN → COMPLETED", () => {
    const path = ["QUEUED", "INIT", "READY", "RUN", "POSTRUN", "COMPLETED"] as const;
    for (let i = 1; i < path.length; i++) expect(canTransition(path[i - 1]!, path[i]!)).toBe(true);
  });

  test("every live state can fail, time out or be cancelled", () => {
    for (const state of ROLLOUT_STATES.filter((s) => !isTerminal(s))) {
      for (const exit of ["ERROR", "TIMEOUT", "CANCELLED"] as const) expect(canTransition(state, exit)).toBe(true);
    }
  });

  test("terminal states have no exits and no state is skipped or revisited", () => {
    for (const state of TERMINAL_STATES) expect(TRANSITIONS[state]).toEqual([]);
    expect(canTransition("QUEUED", "RUN")).toBe(false);
    expect(canTransition("READY", "INIT")).toBe(false);
    expect(canTransition("RUN", "COMPLETED")).toBe(false);
    expect(canTransition("QUEUED", "COMPLETED")).toBe(false);
  });

  test("only POSTRUN completes", () => {
    const into = ROLLOUT_STATES.filter((s) => canTransition(s, "COMPLETED"));
    expect(into).toEqual(["POSTRUN"]);
  });
});
