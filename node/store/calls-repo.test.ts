import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedCall } from "../../protocol/calls.ts";
import { CacheBudget, heapBytes } from "../cache-budget.ts";
import { CallsRepo } from "./calls-repo.ts";
import { openNodeStore } from "./db.ts";
import { SessionsRepo } from "./sessions-repo.ts";

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "polar-store-"));
  dirs.push(dir);
  return join(dir, "node.db");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A harness's tool list: the same few KB on every call of a session. */
const TOOLS: RecordedCall["request"]["tools"] = [
  {
    name: "bash",
    description: "Run a shell command in the repository. ".repeat(40),
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
  { name: "read", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } } } },
];

/** Messages of an agent conversation after `turns` tool rounds: each round adds an assistant call and a tool result. */
function conversation(turns: number): RecordedCall["request"]["messages"] {
  const messages: RecordedCall["request"]["messages"] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the bug." },
  ];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "assistant", content: "", tool_calls: [{ id: `c${t}`, name: "bash", arguments: `{"command":"cat f${t}"}` }] });
    messages.push({ role: "tool", content: `contents of f${t} `.repeat(50), tool_call_id: `c${t}` });
  }
  return messages;
}

function call(sessionId: string, seq: number, promptIds: number[] | null, outputIds: number[] | null): RecordedCall {
  return {
    session_id: sessionId,
    seq,
    dialect: "chat",
    request: { model: "m", messages: conversation(seq), tools: TOOLS, sampling: {}, stream: false },
    response: {
      id: `r${seq}`,
      model: "m",
      content: "ok",
      tool_calls: [],
      finish_reason: "stop",
      usage: { prompt_tokens: promptIds?.length ?? 0, completion_tokens: outputIds?.length ?? 0 },
    },
    prompt_ids: promptIds,
    output_ids: outputIds,
    logprobs: outputIds ? outputIds.map((_, i) => -0.123456789012345 * (i + 1)) : null,
    engine_url: "http://127.0.0.1:1",
    policy_version: 3,
    timings: { queued_ms: 0, engine_ms: 1.5, total_ms: 2 },
    error: null,
    notes: null,
    started_at: new Date(0).toISOString(),
  };
}

/** A 30-turn agent session: each prompt is the previous prompt + sampled output + a tool result. */
function agentSession(sessionId: string, turns: number): RecordedCall[] {
  const out: RecordedCall[] = [];
  let prompt = Array.from({ length: 2000 }, (_, i) => i % 5000);
  for (let t = 0; t < turns; t++) {
    const output = Array.from({ length: 50 }, (_, i) => 10_000 + t * 100 + i);
    out.push(call(sessionId, t, prompt, output));
    const toolResult = Array.from({ length: 200 }, (_, i) => 20_000 + t * 300 + i);
    prompt = [...prompt, ...output, ...toolResult];
  }
  return out;
}

describe("CallsRepo", () => {
  test("round-trips calls exactly and keeps them across a reopen of the file", async () => {
    const path = tempDb();
    const store = await openNodeStore(path);
    const { row } = await new SessionsRepo(store.db).create({ task: "t1" });
    const recorded = agentSession(row.id, 5);
    recorded.push(call(row.id, 5, null, null)); // a text-only call
    const repo = new CallsRepo(store.db);
    for (const c of recorded) await repo.insert(c);
    store.close();

    const reopened = await openNodeStore(path);
    const again = await new CallsRepo(reopened.db).list(row.id);
    expect(again).toEqual(recorded);
    reopened.close();
  });

  test("a 30-turn session stores its unique tokens and messages, not turns × context", async () => {
    const store = await openNodeStore(tempDb());
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db);
    const recorded = agentSession(row.id, 30);
    for (const c of recorded) await repo.insert(c);

    const naivePromptTokens = recorded.reduce((n, c) => n + c.prompt_ids!.length, 0);
    const uniquePromptTokens = recorded.at(-1)!.prompt_ids!.length;
    const bytes = await repo.storedBytes(row.id);
    // Each prompt token is stored once, except the previous output that it repeats: 4 bytes each.
    expect(bytes.prompt).toBe(uniquePromptTokens * 4 - 29 * 50 * 4);
    expect(bytes.prompt).toBeLessThan((naivePromptTokens * 4) / 10);
    // Each request stores only the two messages its turn added (plus the first call's two), and
    // the tools once.
    const naiveRequestBytes = recorded.reduce((n, c) => n + JSON.stringify(c.request).length, 0);
    const finalConversationBytes = JSON.stringify(recorded.at(-1)!.request.messages).length;
    expect(bytes.requests).toBeLessThan(finalConversationBytes + JSON.stringify(TOOLS).length + 30 * 200);
    expect(bytes.requests).toBeLessThan(naiveRequestBytes / 10);
    expect(await repo.list(row.id)).toEqual(recorded);
    store.close();
  });

  test("prompt ids handed in as views of one growing Uint32Array (the chat backends' capture) are stored as the same calls with arrays", async () => {
    const store = await openNodeStore(tempDb());
    const sessions = new SessionsRepo(store.db);
    const [a, b] = [(await sessions.create({})).row, (await sessions.create({})).row];
    const repo = new CallsRepo(store.db);
    const asArrays = agentSession(a.id, 12);
    // One buffer with room to grow, as prompt-ids-json.ts keeps per session; each call's ids a view from 0.
    const buffer = new Uint32Array(asArrays.at(-1)!.prompt_ids!.length + 7);
    buffer.set(asArrays.at(-1)!.prompt_ids!);
    for (const c of asArrays) await repo.insert({ ...c, session_id: b.id, prompt_ids: buffer.subarray(0, c.prompt_ids!.length) });
    for (const c of asArrays) await repo.insert(c);
    expect(await repo.list(b.id)).toEqual(asArrays.map((c) => ({ ...c, session_id: b.id })));
    expect(await repo.storedBytes(b.id)).toEqual(await repo.storedBytes(a.id));
    store.close();
  });

  test("a prompt that diverges (sub-agent, compaction) stores against its best earlier base", async () => {
    const store = await openNodeStore(tempDb());
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db);
    const main = [1, 2, 3, 4, 5, 6, 7, 8];
    await repo.insert(call(row.id, 0, main, [9, 10]));
    await repo.insert(call(row.id, 1, [1, 2, 100, 101], [102])); // sub-agent shares the system prompt
    await repo.insert(call(row.id, 2, [...main, 9, 10, 11], [12])); // main agent continues
    const list = await repo.list(row.id);
    expect(list.map((c) => c.prompt_ids)).toEqual([main, [1, 2, 100, 101], [...main, 9, 10, 11]]);
    const bytes = await repo.storedBytes(row.id);
    expect(bytes.prompt).toBe((8 + 2 + 1) * 4);
    store.close();
  });

  test("calls that finish out of order (seq 1 before seq 0) are stored and read back", async () => {
    const path = tempDb();
    const store = await openNodeStore(path);
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db);
    const first = call(row.id, 0, [1, 2, 3], [4]);
    const second = call(row.id, 1, [1, 2, 3, 9], [5]);
    await repo.insert(second);
    await repo.insert(first);
    await repo.insert(call(row.id, 2, [1, 2, 3, 9, 5, 6], [7]));
    expect(await repo.list(row.id)).toEqual([first, second, call(row.id, 2, [1, 2, 3, 9, 5, 6], [7])]);
    store.close();
    // A fresh repo (restart) rebuilds its recent calls from disk and keeps appending.
    const reopened = await openNodeStore(path);
    const again = new CallsRepo(reopened.db);
    await again.insert(call(row.id, 3, [1, 2, 3, 9, 5, 6, 7, 8], [9]));
    expect((await again.list(row.id)).map((c) => c.prompt_ids)).toEqual([
      [1, 2, 3],
      [1, 2, 3, 9],
      [1, 2, 3, 9, 5, 6],
      [1, 2, 3, 9, 5, 6, 7, 8],
    ]);
    reopened.close();
  });

  test("a call whose tools changed stores its new tools; later calls refer to them", async () => {
    const store = await openNodeStore(tempDb());
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db);
    const first = call(row.id, 0, [1, 2], [3]);
    const changed = { ...call(row.id, 1, [1, 2, 3, 4], [5]), request: { ...call(row.id, 1, null, null).request, tools: [TOOLS[1]!] } };
    const after = { ...call(row.id, 2, [1, 2, 3, 4, 5, 6], [7]), request: { ...call(row.id, 2, null, null).request, tools: [TOOLS[1]!] } };
    const noTools = { ...call(row.id, 3, [1, 2, 3, 4, 5, 6, 7, 8], [9]), request: { ...call(row.id, 3, null, null).request, tools: [] } };
    for (const c of [first, changed, after, noTools]) await repo.insert(c);
    expect((await repo.list(row.id)).map((c) => c.request.tools)).toEqual([TOOLS, [TOOLS[1]!], [TOOLS[1]!], []]);
    store.close();
  });

  test("deleting a session deletes its calls", async () => {
    const store = await openNodeStore(tempDb());
    const sessions = new SessionsRepo(store.db);
    const { row } = await sessions.create({});
    const repo = new CallsRepo(store.db);
    await repo.insert(call(row.id, 0, [1, 2], [3]));
    await sessions.delete(row.id);
    expect(await repo.count(row.id)).toBe(0);
    store.close();
  });

  test("the recent calls kept in memory are charged to a shared byte budget; without room they are re-read from disk", async () => {
    const store = await openNodeStore(tempDb());
    const { row } = await new SessionsRepo(store.db).create({});
    const recorded = agentSession(row.id, 6);
    const budget = new CacheBudget();
    const repo = new CallsRepo(store.db);
    repo.shareCacheBudget(budget);
    for (const c of recorded) await repo.insert(c);
    // One entry (the session) holding its 4 most recent calls; each prompt extends the one before,
    // so the older three point into the newest call's arrays: about one context is charged.
    const newest = recorded.at(-1)!;
    const floor =
      heapBytes.numbers(newest.prompt_ids) + heapBytes.numbers(newest.output_ids) + 2 * JSON.stringify([newest.request.messages, newest.request.tools]).length;
    expect(budget.entries).toBe(1);
    expect(budget.usedBytes).toBeGreaterThan(floor);
    expect(budget.usedBytes).toBeLessThan(floor * 1.5);
    repo.forget(row.id);
    expect([budget.usedBytes, budget.entries]).toEqual([0, 0]);

    // A zero budget keeps nothing in memory; calls are still stored against their bases.
    const other = await openNodeStore(tempDb());
    const session = (await new SessionsRepo(other.db).create({})).row;
    const uncached = new CallsRepo(other.db);
    uncached.shareCacheBudget(new CacheBudget(0));
    const again = agentSession(session.id, 6);
    for (const c of again) await uncached.insert(c);
    expect((await uncached.storedBytes(session.id)).prompt).toBe((await repo.storedBytes(row.id)).prompt);
    expect(await uncached.list(session.id)).toEqual(again);
    store.close();
    other.close();
  });
});
