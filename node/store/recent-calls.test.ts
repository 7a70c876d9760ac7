// The recent calls share their arrays once a newer call extends them; that must never change
// which earlier call a new one is stored against, nor how much of it is shared. Random sessions
// (contexts that extend, branch off into a sub-agent, restart after a compaction, calls that finish
// out of order) are stored with sharing and against a reference that keeps every call's own arrays.
import { describe, expect, test } from "bun:test";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message } from "../../protocol/chat.ts";
import { RecentCalls, type Bases } from "./recent-calls.ts";
import { sameJson } from "./same-json.ts";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function call(seq: number, prompt: number[] | null, output: number[], messages: Message[], tools: RecordedCall["request"]["tools"]): RecordedCall {
  return {
    session_id: "s",
    seq,
    dialect: "chat",
    request: { model: "m", messages, tools, sampling: {}, stream: false },
    response: null,
    prompt_ids: prompt,
    output_ids: output,
    logprobs: null,
    engine_url: null,
    policy_version: 0,
    timings: { queued_ms: 0, engine_ms: 0, total_ms: 0 },
    error: null,
    notes: null,
    started_at: "t",
  };
}

/** The same choices made over every earlier call's own arrays (what the store did before sharing). */
function referenceBases(earlier: readonly RecordedCall[], c: RecordedCall): Bases {
  const candidates = earlier.slice(-4).filter((e) => e.seq < c.seq);
  const best = (len: (e: RecordedCall) => number) => {
    let found: { seq: number; len: number } | undefined;
    for (let i = candidates.length - 1; i >= 0; i--) {
      const n = len(candidates[i]!);
      if (n > (found?.len ?? 0)) found = { seq: candidates[i]!.seq, len: n };
    }
    return found;
  };
  const prefix = <T>(a: readonly T[], b: readonly T[], eq: (x: T, y: T) => boolean) => {
    let i = 0;
    while (i < a.length && i < b.length && eq(a[i]!, b[i]!)) i++;
    return i;
  };
  return {
    prompt: c.prompt_ids ? best((e) => (e.prompt_ids ? prefix([...e.prompt_ids, ...(e.output_ids ?? [])], c.prompt_ids!, (x, y) => x === y) : 0)) : undefined,
    messages: best((e) => prefix(e.request.messages, c.request.messages, sameJson)),
    tools: c.request.tools.length > 0 ? candidates.findLast((e) => sameJson(e.request.tools, c.request.tools))?.seq : undefined,
  };
}

/** A session as an agent makes it: main-agent turns, sub-agent turns beside them, now and then a compaction. */
function session(seed: number, calls: number): RecordedCall[] {
  const r = rng(seed);
  const tools = [{ name: "bash", parameters: { type: "object" } }];
  const agents = [{ prompt: [1, 2, 3], messages: [{ role: "system", content: "main" }] as Message[] }];
  const out: RecordedCall[] = [];
  let next = 100;
  for (let seq = 0; seq < calls; seq++) {
    const roll = r();
    if (roll < 0.15 && agents.length < 3) agents.push({ prompt: [1, 2, 9], messages: [{ role: "system", content: `sub ${seq}` }] });
    if (roll > 0.92)
      agents[0] = {
        prompt: [1, 2, next++],
        messages: [
          { role: "system", content: "main" },
          { role: "user", content: `summary ${seq}` },
        ],
      };
    const agent = agents[Math.floor(r() * agents.length)]!;
    const output = Array.from({ length: 1 + Math.floor(r() * 3) }, () => next++);
    out.push(call(seq, [...agent.prompt], output, [...agent.messages], r() < 0.1 ? [] : tools));
    agent.prompt = [...agent.prompt, ...output, next++, next++];
    agent.messages = [...agent.messages, { role: "assistant", content: `a${seq}` }, { role: "tool", content: `t${seq}`, tool_call_id: `c${seq}` }];
  }
  // Some calls finish out of order.
  for (let i = 0; i + 1 < out.length; i++) if (r() < 0.1) [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
  return out;
}

describe("recent calls", () => {
  test("sharing arrays changes no base over 200 random sessions", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const recent = new RecentCalls();
      const stored: RecordedCall[] = [];
      for (const c of session(seed, 40)) {
        const bases = recent.basesFor(c);
        expect(bases).toEqual(referenceBases(stored, c));
        recent.add(c, bases);
        stored.push(c);
      }
    }
  });

  test("a session whose prompts extend each other holds one context, not one per recent call", () => {
    const recent = new RecentCalls();
    let prompt = Array.from({ length: 10_000 }, (_, i) => i);
    const single = new RecentCalls();
    for (let seq = 0; seq < 8; seq++) {
      const c = call(seq, prompt, [50_000 + seq], [{ role: "user", content: "x".repeat(1000) }], []);
      recent.add(c, recent.basesFor(c));
      if (seq === 7) single.add(c, single.basesFor(c));
      prompt = [...prompt, 50_000 + seq, 60_000 + seq];
    }
    expect(recent.bytes()).toBeLessThan(single.bytes() * 1.2);
  });
});
