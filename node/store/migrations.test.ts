// A database written before the snake_case migration (0002) — created here with the old
// migrations 0000/0001 and rows in the old camelCase JSON shape — opens with the current code and
// reads its calls back in the current wire shape.
import { afterEach, describe, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { RecordedCall } from "../../protocol/calls.ts";
import { CallsRepo } from "./calls-repo.ts";
import { openNodeStore } from "./db.ts";
import { encodeFloats, encodeIds } from "./token-codec.ts";

const MIGRATIONS = resolve(import.meta.dir, "../../migrations/node");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A migrations folder holding only the migrations up to `lastTag`, as an older checkout had. */
function oldMigrations(dir: string, lastTag: string): string {
  const folder = join(dir, "migrations");
  mkdirSync(join(folder, "meta"), { recursive: true });
  const journal = JSON.parse(readFileSync(join(MIGRATIONS, "meta/_journal.json"), "utf8")) as { entries: { tag: string }[] };
  const upTo = journal.entries.findIndex((e) => e.tag === lastTag);
  expect(upTo).toBeGreaterThanOrEqual(0);
  const entries = journal.entries.slice(0, upTo + 1);
  for (const e of entries) copyFileSync(join(MIGRATIONS, `${e.tag}.sql`), join(folder, `${e.tag}.sql`));
  writeFileSync(join(folder, "meta/_journal.json"), JSON.stringify({ ...journal, entries }));
  return folder;
}

const SESSION = "ses_old";
const MESSAGES_0 = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Fix the bug." },
];
const TOOLS = [{ name: "bash", description: "Run a command.", parameters: { type: "object", properties: { command: { type: "string" } } } }];

/** Rows exactly as the gateway stored them before 0002 (camelCase JSON keys). */
function oldRows(): { sql: string; args: (string | number | Buffer | null)[] }[] {
  const insert = (values: Record<string, string | number | Buffer | null>) => ({
    sql: `INSERT INTO calls (${Object.keys(values).join(", ")}) VALUES (${Object.keys(values)
      .map(() => "?")
      .join(", ")})`,
    args: Object.values(values),
  });
  const common = {
    session_id: SESSION,
    dialect: "chat",
    engine_url: "http://127.0.0.1:1",
    policy_version: 2,
    queued_ms: 0.5,
    engine_ms: 3,
    total_ms: 4,
    started_at: "2026-12-01T00:00:00.000Z",
  };
  return [
    {
      sql: "INSERT INTO sessions (id, token_hash, metadata, created_at) VALUES (?, ?, ?, ?)",
      args: [SESSION, "hash", '{"rollout":"r1"}', "2026-12-01T00:00:00.000Z"],
    },
    insert({
      ...common,
      seq: 0,
      request: JSON.stringify({
        model: "m",
        messages: MESSAGES_0,
        tools: TOOLS,
        toolChoice: "auto",
        sampling: { maxTokens: 64, topP: 0.9, topK: 20, seed: 1 },
        stream: true,
        renderHints: { includeUsage: true },
      }),
      messages_base_len: 0,
      response: JSON.stringify({
        id: "r0",
        model: "m",
        content: "",
        reasoning: "look first",
        toolCalls: [{ id: "c0", name: "bash", arguments: '{"command":"ls"}' }],
        finishReason: "tool_calls",
        usage: { promptTokens: 3, completionTokens: 2 },
      }),
      prompt_base_len: 0,
      prompt_suffix: encodeIds([1, 2, 3]),
      output_ids: encodeIds([4, 5]),
      logprobs: encodeFloats([-0.5, -0.25]),
      notes: JSON.stringify({ attempts: 2, tokenSplice: { used: 1, missed: 0, drift: 0 } }),
    }),
    insert({
      ...common,
      seq: 1,
      // Stored against call 0: only the two messages this turn added; tools by reference.
      request: JSON.stringify({
        model: "m",
        messages: [
          { role: "assistant", content: "", reasoning: "look first", toolCalls: [{ id: "c0", name: "bash", arguments: '{"command":"ls"}' }] },
          { role: "tool", content: "a.txt", toolCallId: "c0", name: "bash" },
        ],
        tools: [],
        sampling: {},
        stream: false,
        renderHints: { toolNamespaces: { ns__bash: { namespace: "ns", name: "bash" } } },
      }),
      messages_base_seq: 0,
      messages_base_len: 2,
      tools_base_seq: 0,
      response: JSON.stringify({
        id: "r1",
        model: "m",
        content: "done END",
        toolCalls: [],
        finishReason: "stop",
        stopSequence: "END",
        usage: { promptTokens: 9, completionTokens: 1 },
      }),
      prompt_base_seq: 0,
      prompt_base_len: 5,
      prompt_suffix: encodeIds([6, 7]),
      output_ids: encodeIds([8]),
      logprobs: encodeFloats([-1]),
      notes: JSON.stringify({ weightVersion: "w1", tokenCaptureError: "no ids", textOnly: true }),
    }),
    insert({
      ...common,
      seq: 2,
      request: JSON.stringify({ model: "m", messages: [], tools: [], sampling: { maxTokens: 8 }, stream: false }),
      messages_base_seq: 1,
      messages_base_len: 4,
      response: null,
      prompt_base_len: 0,
      error: JSON.stringify({ code: "engine_error", message: "boom" }),
      notes: JSON.stringify({ toolCallParseError: "malformed tool call" }),
    }),
  ];
}

const timings = { queued_ms: 0.5, engine_ms: 3, total_ms: 4 };
const common = {
  session_id: SESSION,
  dialect: "chat" as const,
  engine_url: "http://127.0.0.1:1",
  policy_version: 2,
  timings,
  started_at: "2026-12-01T00:00:00.000Z",
};
const assistant = { role: "assistant" as const, content: "", reasoning: "look first", tool_calls: [{ id: "c0", name: "bash", arguments: '{"command":"ls"}' }] };
const toolResult = { role: "tool" as const, content: "a.txt", tool_call_id: "c0", name: "bash" };

/** The same three calls in today's wire shape. */
const EXPECTED: RecordedCall[] = [
  {
    ...common,
    seq: 0,
    request: {
      model: "m",
      messages: MESSAGES_0 as RecordedCall["request"]["messages"],
      tools: TOOLS,
      tool_choice: "auto",
      sampling: { max_tokens: 64, top_p: 0.9, top_k: 20, seed: 1 },
      stream: true,
      render_hints: { include_usage: true },
    },
    response: {
      id: "r0",
      model: "m",
      content: "",
      reasoning: "look first",
      tool_calls: assistant.tool_calls,
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    },
    prompt_ids: [1, 2, 3],
    output_ids: [4, 5],
    logprobs: [-0.5, -0.25],
    error: null,
    notes: { attempts: 2, token_splice: { used: 1, missed: 0, drift: 0 } },
  },
  {
    ...common,
    seq: 1,
    request: {
      model: "m",
      messages: [...(MESSAGES_0 as RecordedCall["request"]["messages"]), assistant, toolResult],
      tools: TOOLS,
      sampling: {},
      stream: false,
      render_hints: { tool_namespaces: { ns__bash: { namespace: "ns", name: "bash" } } },
    },
    response: {
      id: "r1",
      model: "m",
      content: "done END",
      tool_calls: [],
      finish_reason: "stop",
      stop_sequence: "END",
      usage: { prompt_tokens: 9, completion_tokens: 1 },
    },
    prompt_ids: [1, 2, 3, 4, 5, 6, 7],
    output_ids: [8],
    logprobs: [-1],
    error: null,
    notes: { weight_version: "w1", token_capture_error: "no ids", text_only: true },
  },
  {
    ...common,
    seq: 2,
    request: {
      model: "m",
      messages: [...(MESSAGES_0 as RecordedCall["request"]["messages"]), assistant, toolResult],
      tools: [],
      sampling: { max_tokens: 8 },
      stream: false,
    },
    response: null,
    prompt_ids: null,
    output_ids: null,
    logprobs: null,
    error: { code: "engine_error", message: "boom" },
    notes: { tool_call_parse_error: "malformed tool call" },
  },
];

/** Every object key in a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
}

describe("node store migrations", () => {
  test("a database written by schema 0001 with camelCase JSON reads back in the snake_case wire shape", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polar-migrate-"));
    dirs.push(dir);
    const path = join(dir, "node.db");

    const oldClient = createClient({ url: `file:${path}` });
    await migrate(drizzle(oldClient), { migrationsFolder: oldMigrations(dir, "0001_tools_base") });
    await oldClient.batch(oldRows(), "write");
    oldClient.close();

    const store = await openNodeStore(path);
    const calls = await new CallsRepo(store.db).list(SESSION);
    expect(calls).toEqual(EXPECTED);
    // Every call is a valid wire RecordedCall, and parsing drops nothing (no stray camelCase keys).
    for (const call of calls) expect(RecordedCall.strict().parse(call)).toEqual(call);
    const raw = store.db.$client.query<Record<string, string | null>, []>("SELECT request, response, notes FROM calls ORDER BY seq").all();
    const storedKeys = raw.flatMap((r) => [r.request, r.response, r.notes].flatMap((cell) => (cell === null ? [] : keysOf(JSON.parse(String(cell))))));
    expect(storedKeys.filter((k) => /[A-Z]/.test(k))).toEqual([]);
    store.close();

    // Reopening runs nothing twice.
    const again = await openNodeStore(path);
    expect(await new CallsRepo(again.db).list(SESSION)).toEqual(EXPECTED);
    again.close();
  });
});
