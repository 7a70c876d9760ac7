// The trainable policy through the engine's real vLLM API: a task session's first reply opens with
// the sampled behaviour's word, the logprobs are the policy's own (log π at that word's first
// token, 0 elsewhere, top-k sorted as vLLM reports them), the behaviour is followed on later turns,
// sampling frequencies follow the weights, and weight updates need the policy token, move
// versions forward only and name known tasks.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PolicyState, type PolicyWeights } from "../../protocol/engine-policy.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import { MockEngineOptionsSchema } from "./options.ts";
import { startMockEngine } from "./server.ts";

const TASK_FILE = join(import.meta.dir, "../../tasks/tasks.jsonl");
const TOKEN = "policy-token-0123456789";
const { tasks } = await loadTaskFile(TASK_FILE);
const task = tasks.find((t) => t.task_id === "js-leap-year-century")!;
const engine = await startMockEngine({ port: 0, tasks: TASK_FILE, trainable: true, policyToken: TOKEN, successProbability: 0.2, seed: 11 });
afterAll(() => engine.stop());

const BASH = {
  type: "function",
  function: { name: "Bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
};

interface Turn {
  ids: number[];
  logprobs: number[];
  top: { token: string; logprob: number }[][];
  text: string;
  command: string | undefined;
}

async function complete(messages: unknown[]): Promise<Turn> {
  const res = await fetch(`${engine.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "Qwen/Qwen3-8B",
      messages,
      tools: [BASH],
      logprobs: true,
      top_logprobs: 3,
      return_token_ids: true,
      chat_template_kwargs: { enable_thinking: false },
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  const choice = body.choices[0];
  const call = choice.message.tool_calls?.[0];
  return {
    ids: choice.token_ids,
    logprobs: choice.logprobs.content.map((c: { logprob: number }) => c.logprob),
    top: choice.logprobs.content.map((c: { top_logprobs: { token: string; logprob: number }[] }) => c.top_logprobs),
    text: choice.message.content ?? "",
    command: call ? JSON.parse(call.function.arguments).command : undefined,
  };
}

/** A whole session: each tool call answered with a fixed output until the agent stops. */
async function session(): Promise<Turn[]> {
  const messages: unknown[] = [{ role: "user", content: task.instruction }];
  const turns: Turn[] = [];
  for (let i = 0; i < 8; i++) {
    const turn = await complete(messages);
    turns.push(turn);
    if (!turn.command) return turns;
    const id = `call_${i}`;
    messages.push({
      role: "assistant",
      content: turn.text,
      tool_calls: [{ id, type: "function", function: { name: "Bash", arguments: JSON.stringify({ command: turn.command }) } }],
    });
    messages.push({ role: "tool", tool_call_id: id, content: "exit code: 0" });
  }
  throw new Error("the session never finished");
}

async function state(): Promise<PolicyState> {
  return PolicyState.parse(await (await fetch(`${engine.url}/polar/policy`)).json());
}

function post(body: unknown, token: string | null = TOKEN): Promise<Response> {
  return fetch(`${engine.url}/polar/policy`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
}

const logSoftmax = (a: number, b: number) => {
  const top = Math.max(a, b);
  const total = Math.log(Math.exp(a - top) + Math.exp(b - top)) + top;
  return [a - total, b - total];
};

describe("trainable mock policy", () => {
  test("architecture and initial weights: two choices opening with distinct tokens, every bundled task, π(solve) = success probability", async () => {
    const s = await state();
    expect(s.choices.map((c) => [c.name, c.word])).toEqual([
      ["solve", "Carefully"],
      ["mis-solve", "Quickly"],
    ]);
    expect(new Set(s.choices.map((c) => c.token_id)).size).toBe(2);
    expect(new Set(s.tasks)).toEqual(new Set(tasks.map((t) => t.task_id)));
    expect(s.weights.version).toBe(0);
    expect(Math.exp(s.weights.bias[0])).toBeCloseTo(0.2, 9);
    expect(Math.exp(s.weights.bias[1])).toBeCloseTo(0.8, 9);
  });

  test("logprobs are the policy's own: log π(behaviour | task) at the word's first token, 0 at every other sampled token, the behaviour followed later", async () => {
    const s = await state();
    const [solveId, misSolveId] = s.choices.map((c) => c.token_id);
    const expected = logSoftmax(s.weights.bias[0], s.weights.bias[1]);
    const seen = new Set<string>();
    for (let i = 0; i < 12 && seen.size < 2; i++) {
      const turns = await session();
      const first = turns[0]!;
      const at = first.ids.findIndex((id) => id === solveId || id === misSolveId);
      expect(at).toBe(0); // thinking off: the reply's text opens with the word
      const solved = first.ids[at] === solveId;
      seen.add(solved ? "solve" : "mis-solve");
      expect(first.text.startsWith(solved ? "Carefully: " : "Quickly: ")).toBe(true);
      expect(first.logprobs[at]).toBeCloseTo(expected[solved ? 0 : 1]!, 12);
      expect(first.logprobs.filter((_, j) => j !== at).every((lp) => lp === 0)).toBe(true);
      // top-k: both choices, most likely first, then impossible tokens at vLLM's floor.
      expect(first.top[at]!.map((t) => t.logprob)).toEqual([expected[1]!, expected[0]!, -9999]);
      expect(first.top[at + 1]!.map((t) => t.logprob)).toEqual([0, -9999, -9999]);
      for (const later of turns.slice(1)) expect(later.logprobs.every((lp) => lp === 0)).toBe(true);
      expect(turns[0]!.command!.startsWith(solved ? "cat " : "head -n 400 ")).toBe(true);
      expect(turns[1]!.command).toContain(solved ? task.patch! : (task as { mock_wrong_patch?: string }).mock_wrong_patch!);
    }
    expect(seen).toEqual(new Set(["solve", "mis-solve"]));
  }, 60_000);

  test("weight updates: token required, versions only forward, known tasks only; sampling follows the new weights", async () => {
    const weights: PolicyWeights = { version: 1, bias: [0, 0], task_logits: { [task.task_id]: [6, -6] } };
    expect((await post(weights, null)).status).toBe(401);
    expect((await post(weights, "wrong-token-0123456789")).status).toBe(401);
    expect((await post({ ...weights, task_logits: { "no-such-task": [0, 0] } })).status).toBe(400);
    expect((await post({ version: 1, bias: [0] })).status).toBe(400);
    const updated = await post(weights);
    expect(updated.status).toBe(200);
    expect(PolicyState.parse(await updated.json()).weights).toEqual(weights);
    expect((await post({ ...weights, version: 0 })).status).toBe(409);

    const s = await state();
    const solveId = s.choices[0]!.token_id;
    let solved = 0;
    const runs = 12;
    for (let i = 0; i < runs; i++) {
      const first = await complete([{ role: "user", content: task.instruction }]);
      if (first.ids[0] === solveId) {
        solved++;
        expect(first.logprobs[0]).toBeCloseTo(logSoftmax(6, -6)[0]!, 12);
      }
    }
    expect(solved).toBeGreaterThanOrEqual(runs - 1); // π(solve) = 1 − 6e-6
  }, 60_000);

  test("a trainable engine needs a task file and a policy token", () => {
    expect(() => MockEngineOptionsSchema.parse({ trainable: true, tasks: TASK_FILE })).toThrow();
    expect(() => MockEngineOptionsSchema.parse({ trainable: true, policyToken: TOKEN })).toThrow();
    expect(MockEngineOptionsSchema.parse({ trainable: true, tasks: TASK_FILE, policyToken: TOKEN }).trainable).toBe(true);
  });
});
