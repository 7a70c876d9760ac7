import { describe, expect, test } from "bun:test";
import type { PivotMessage } from "../pivot.ts";
import { CacheBudget } from "../../cache-budget.ts";
import { ChatBodyJson } from "./chat-body-json.ts";

const pivot: PivotMessage[] = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: 'def f():\n    return "x"\n' },
  { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "bash", arguments: '{"command":"ls"}' }] },
];
/** Engine-format messages; `tag` marks which call serialised them, so a reused JSON shows the earlier tag. */
const wire = (tag: string) => pivot.map((m, i) => ({ role: m.role, content: m.content, tag: `${tag}${i}` }));
const rest = { model: "m", stream: false, max_tokens: 8, chat_template_kwargs: { enable_thinking: false } };

describe("ChatBodyJson", () => {
  test("serialises the body as JSON.stringify would (messages first)", () => {
    const json = new ChatBodyJson().serialize("s", pivot, wire("a"), rest);
    expect(JSON.parse(json)).toEqual({ ...rest, messages: wire("a") });
    expect(JSON.parse(new ChatBodyJson().serialize("s", [], [], {}))).toEqual({ messages: [] });
  });

  test("a session's unchanged leading messages keep their JSON; from the first change on, messages are serialised anew", () => {
    const bodies = new ChatBodyJson();
    bodies.serialize("s", pivot, wire("a"), rest);
    const changed = [pivot[0]!, { ...pivot[1]!, content: "other" }, pivot[2]!];
    const second = JSON.parse(bodies.serialize("s", changed, wire("b"), rest)) as { messages: Array<{ tag: string }> };
    expect(second.messages.map((m) => m.tag)).toEqual(["a0", "b1", "b2"]);
    // Another session never shares a session's JSON.
    const other = JSON.parse(bodies.serialize("t", changed, wire("c"), rest)) as { messages: Array<{ tag: string }> };
    expect(other.messages.map((m) => m.tag)).toEqual(["c0", "c1", "c2"]);
  });

  test("forgotten sessions and sessions beyond the byte budget are serialised in full", () => {
    const bodies = new ChatBodyJson();
    bodies.serialize("s", pivot, wire("a"), rest);
    bodies.forget("s");
    const afterForget = JSON.parse(bodies.serialize("s", pivot, wire("b"), rest)) as { messages: Array<{ tag: string }> };
    expect(afterForget.messages.map((m) => m.tag)).toEqual(["b0", "b1", "b2"]);

    const measured = new CacheBudget();
    const probe = new ChatBodyJson();
    probe.shareCacheBudget(measured);
    probe.serialize("s", pivot, wire("a"), rest);
    const oneSession = measured.usedBytes;
    const small = new ChatBodyJson(oneSession + 8);
    small.serialize("s", pivot, wire("a"), rest);
    small.serialize("t", pivot, wire("b"), rest); // evicts s (least recently used)
    const s = JSON.parse(small.serialize("s", pivot, wire("c"), rest)) as { messages: Array<{ tag: string }> };
    expect(s.messages.map((m) => m.tag)).toEqual(["c0", "c1", "c2"]);
  });

  test("given the gateway's shared budget, the held JSON is charged there and evicted with the least recently used entries", () => {
    const shared = new CacheBudget();
    const bodies = new ChatBodyJson(1); // its own budget would hold nothing
    bodies.shareCacheBudget(shared);
    bodies.serialize("s", pivot, wire("a"), rest);
    expect(shared.entries).toBe(1);
    const held = shared.usedBytes;
    expect(held).toBeGreaterThan(JSON.stringify(wire("a")).length * 2);
    const reused = JSON.parse(bodies.serialize("s", pivot, wire("b"), rest)) as { messages: Array<{ tag: string }> };
    expect(reused.messages.map((m) => m.tag)).toEqual(["a0", "a1", "a2"]);
    expect(shared.usedBytes).toBe(held);

    const tight = new CacheBudget(held);
    bodies.shareCacheBudget(tight);
    bodies.serialize("t", pivot, wire("c"), rest); // over the shared budget: s goes
    expect(tight.entries).toBe(1);
    const s = JSON.parse(bodies.serialize("s", pivot, wire("d"), rest)) as { messages: Array<{ tag: string }> };
    expect(s.messages.map((m) => m.tag)).toEqual(["d0", "d1", "d2"]);
  });
});
