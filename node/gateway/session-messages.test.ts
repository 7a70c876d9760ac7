import { describe, expect, test } from "bun:test";
import { CacheBudget } from "../cache-budget.ts";
import { chatRequest } from "../../test/support/gateway/backend-fixtures.ts";
import type { PivotMessage, PivotTool } from "./pivot.ts";
import { SessionMessages } from "./session-messages.ts";

/** What an agent's next call re-sends: the same conversation, parsed afresh (new objects), plus `more`. */
const parsedAgain = <T>(list: readonly T[], ...more: T[]): T[] => [...(JSON.parse(JSON.stringify(list)) as T[]), ...more];

const tool = (name: string): PivotTool => ({ name, description: `the ${name} tool`, parameters: { type: "object" } });

describe("SessionMessages", () => {
  test("a call's messages and tools equal to the session's previous call's become those objects, up to the first that differs", () => {
    const interned = new SessionMessages();
    const first: PivotMessage[] = [
      { role: "system", content: "You are an agent." },
      { role: "user", content: "Fix the bug." },
    ];
    const firstTools = [tool("bash"), tool("read_file")];
    const a = chatRequest(first, { tools: firstTools });
    interned.intern("s", a);
    expect(a.messages).toBe(first); // the first call of a session is left as parsed

    const b = chatRequest(parsedAgain(first, { role: "assistant", content: "Looking." }), { tools: parsedAgain(firstTools) });
    const bCopy = structuredClone(b);
    interned.intern("s", b);
    expect(b).toEqual(bCopy); // the same request as JSON
    expect(b.messages[0]).toBe(first[0]!);
    expect(b.messages[1]).toBe(first[1]!);
    expect(b.tools[0]).toBe(firstTools[0]!);
    expect(b.tools[1]).toBe(firstTools[1]!);

    // An edited earlier message stops the sharing there; another session shares nothing with this one.
    const edited = parsedAgain(b.messages);
    edited[1] = { role: "user", content: "Fix the other bug." };
    const c = chatRequest(edited);
    interned.intern("s", c);
    expect(c.messages[0]).toBe(first[0]!);
    expect(c.messages[1]).not.toBe(first[1]!);
    expect(c.messages[2]).not.toBe(b.messages[2]!);
    const other = chatRequest(parsedAgain(first));
    interned.intern("t", other);
    expect(other.messages[0]).not.toBe(first[0]!);
  });

  test("charged to the shared budget, and nothing is shared once the session is forgotten", () => {
    const interned = new SessionMessages();
    const budget = new CacheBudget();
    interned.shareCacheBudget(budget);
    const first: PivotMessage[] = [{ role: "user", content: "hi" }];
    interned.intern("s", chatRequest(first));
    expect(budget.entries).toBe(1);
    interned.forget("s");
    expect(budget.entries).toBe(0);
    const again = chatRequest(parsedAgain(first));
    interned.intern("s", again);
    expect(again.messages[0]).not.toBe(first[0]!);
  });
});
