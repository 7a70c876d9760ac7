// Why: a long agent session re-sends its whole context every turn; this shows that the node's
// store grows with the session's unique tokens, not with turns × context. It drives a 30-turn
// tool loop through a real gateway and mock engine and reports what the store holds.
//
//   bun bench/storage.ts [--turns 30] [--tool-output-bytes 2000] [--tools-bytes 20000]
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import { openNodeStore } from "../node/store/db.ts";
import { CallsRepo } from "../node/store/calls-repo.ts";
import { startStack } from "../test/helpers/stack.ts";

const { values } = parseArgs({ options: { turns: { type: "string" }, "tool-output-bytes": { type: "string" }, "tools-bytes": { type: "string" } } });
const TURNS = Number(values.turns ?? 30);
const TOOL_BYTES = Number(values["tool-output-bytes"] ?? 2000);
/** Harnesses offer 3–40 KB of tool definitions on every call (docs/harnesses.md). */
const TOOLS_BYTES = Number(values["tools-bytes"] ?? 20_000);

const stack = await startStack({ engine: { script: { steps: Array.from({ length: TURNS }, (_, i) => ({ shell: `cat src/file_${i}.py` })) } } });
try {
  const session = await stack.session({ bench: "storage" });
  const bash = {
    type: "function",
    function: {
      name: "bash",
      description: "Run a shell command",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
  };
  const helper = (i: number) => ({
    type: "function",
    function: {
      name: `tool_${i}`,
      description: "A harness tool with a long description. ".repeat(24),
      parameters: { type: "object", properties: { arg: { type: "string" } } },
    },
  });
  const tools = [bash, ...Array.from({ length: Math.max(0, Math.round(TOOLS_BYTES / 1100)) }, (_, i) => helper(i))];
  const messages: unknown[] = [
    { role: "system", content: "You are a coding agent working in a Python repository. ".repeat(40) },
    { role: "user", content: "Read every file under src/ and summarise the architecture." },
  ];
  for (let turn = 0; turn < TURNS; turn++) {
    const res = await fetch(`${session.openai_base_url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages, tools, max_tokens: 256 }),
    });
    const reply = ((await res.json()) as { choices: Array<{ message: { content: string | null; tool_calls?: Array<{ id: string }> } }> }).choices[0]!.message;
    messages.push(reply);
    const call = reply.tool_calls?.[0];
    if (!call) break;
    const output = `# file ${turn}\n` + `def f_${turn}(x):\n    return x * ${turn}  # arithmetic\n`.repeat(Math.ceil(TOOL_BYTES / 45));
    messages.push({ role: "tool", tool_call_id: call.id, content: output.slice(0, TOOL_BYTES) });
  }
  const calls = await stack.calls(session.id);
  await stack.stopGateway();

  const store = await openNodeStore(stack.dbPath);
  const bytes = await new CallsRepo(store.db).storedBytes(session.id);
  store.db.$client.run("PRAGMA wal_checkpoint(TRUNCATE)");
  store.close();
  const promptTokens = calls.reduce((n, c) => n + c.prompt_ids!.length, 0);
  const outputTokens = calls.reduce((n, c) => n + c.output_ids!.length, 0);
  const uniqueTokens = calls.at(-1)!.prompt_ids!.length + calls.at(-1)!.output_ids!.length;
  const jsonBytes = calls.reduce((n, c) => n + JSON.stringify(c.prompt_ids).length, 0);
  console.log(`tools offered on every call: ${JSON.stringify(tools).length.toLocaleString("en")} bytes`);
  console.log(`${calls.length} calls; final context ${uniqueTokens} tokens; sum of prompt lengths ${promptTokens} tokens; sampled ${outputTokens} tokens`);
  console.log(`| what | bytes |\n|---|---|`);
  console.log(`| prompt ids as JSON arrays, every call in full | ${jsonBytes.toLocaleString("en")} |`);
  console.log(`| prompt ids as uint32, every call in full | ${(promptTokens * 4).toLocaleString("en")} |`);
  console.log(`| prompt ids stored (uint32 suffixes against an earlier call) | ${bytes.prompt.toLocaleString("en")} |`);
  console.log(`| sampled ids stored (uint32) | ${bytes.output.toLocaleString("en")} |`);
  console.log(`| logprobs stored (float64) | ${bytes.logprobs.toLocaleString("en")} |`);
  const requestJson = calls.reduce((n, c) => n + JSON.stringify(c.request).length, 0);
  console.log(`| request JSON, every call in full | ${requestJson.toLocaleString("en")} |`);
  console.log(`| request JSON stored (new messages against an earlier call, tools once) | ${bytes.requests.toLocaleString("en")} |`);
  console.log(`| SQLite file after a WAL checkpoint, everything included | ${(statSync(stack.dbPath).size + walSize(stack.dbPath)).toLocaleString("en")} |`);
  console.log(
    `stored prompt bytes / (final context × 4) = ${(bytes.prompt / (uniqueTokens * 4)).toFixed(3)}; vs full prompts: ${((promptTokens * 4) / bytes.prompt).toFixed(1)}× smaller`,
  );
} finally {
  await stack.stop();
}

function walSize(db: string): number {
  try {
    return statSync(`${db}-wal`).size;
  } catch {
    return 0;
  }
}
