// The task-solving policy over real Qwen3-rendered prompts: it finds the bundled task, walks
// read → patch → test → finish through the offered shell tool, follows its first-turn choice on
// later turns, decides per session with the seed (varied across sessions, reproducible across
// engine restarts), and its text round-trips through the real tokenizer.
import { describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BASE_COMMIT_ENV } from "../eval/bundled.ts";
import { getChatTemplate, type TemplateMessage, type TemplateTool } from "../tokenizer/chat-template.ts";
import { parseQwen3Output } from "../tokenizer/qwen3-output.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import { scriptedCompletion } from "./policy.ts";
import { DEFAULT_SCRIPT } from "./script.ts";
import { TaskPolicy } from "./task-policy.ts";

const TASK_FILE = join(import.meta.dir, "../../tasks/tasks.jsonl");
const template = getChatTemplate();
const { tasks } = await loadTaskFile(TASK_FILE);
const task = tasks.find((t) => t.task_id === "js-leap-year-century")!;

const BASH: TemplateTool = {
  type: "function",
  function: {
    name: "Bash",
    description: "Run a command",
    parameters: { type: "object", properties: { command: { type: "string" }, description: { type: "string" } }, required: ["command", "description"] },
  },
};

function prompt(messages: TemplateMessage[]): string {
  return template.render(messages, { tools: [BASH], enableThinking: false });
}

/** Plays a whole session against the policy, answering each tool call with a fixed output. */
function session(policy: TaskPolicy, system: string, subject = task): { commands: string[]; final: string } {
  const messages: TemplateMessage[] = [
    { role: "system", content: system },
    { role: "user", content: subject.instruction },
  ];
  const commands: string[] = [];
  for (let turn = 0; turn < 10; turn++) {
    const text = scriptedCompletion(prompt(messages), DEFAULT_SCRIPT, policy);
    expect(template.tokenizer.decode(template.tokenizer.encode(text))).toBe(text);
    const parsed = parseQwen3Output(text);
    const call = parsed.toolCalls[0];
    if (!call) return { commands, final: parsed.content };
    const args = JSON.parse(call.arguments) as { command: string; description: string };
    expect(call.name).toBe("Bash");
    expect(args.description).toStartWith("Run: ");
    commands.push(args.command);
    messages.push({
      role: "assistant",
      content: parsed.content,
      tool_calls: [{ type: "function", id: call.id, function: { name: call.name, arguments: args } }],
    });
    messages.push({ role: "tool", tool_call_id: call.id, content: "exit code: 0\n(output)" });
  }
  throw new Error("the policy never finished");
}

describe("task-solving mock policy", () => {
  test("success probability 1: read the files the fix touches, apply the gold patch by heredoc, run the tests, finish", () => {
    const { commands, final } = session(new TaskPolicy(tasks, { successProbability: 1, seed: 0 }), "You are an agent.");
    expect(commands[0]).toBe("cat src/leap.js");
    expect(commands[1]).toBe(`git apply <<'POLAR_PATCH'\n${task.patch}POLAR_PATCH\ngit diff --stat`);
    expect(commands[2]).toBe("node --test --test-reporter=tap test/");
    expect(commands.length).toBe(3);
    expect(final).toContain("Fixed: February 1900 has 29 days according to daysInMonth");
  });

  test("success probability 0: the wrong fix, and every later turn follows that first choice", () => {
    const { commands } = session(new TaskPolicy(tasks, { successProbability: 0, seed: 0 }), "You are an agent.");
    expect(commands[0]).toBe("head -n 400 src/leap.js");
    expect(commands[1]).toBe(`git apply <<'POLAR_PATCH'\n${(task as { mock_wrong_patch?: string }).mock_wrong_patch}POLAR_PATCH\ngit diff --stat`);
    expect(commands[1]).not.toContain(task.patch!);
  });

  test("in between: decided once per session, varied across sessions of one prompt, the same after a restart with the same seed", () => {
    const outcomes = (seed: number) => {
      const policy = new TaskPolicy(tasks, { successProbability: 0.5, seed });
      return Array.from({ length: 24 }, () => session(policy, "You are an agent.").commands[0]!.startsWith("cat "));
    };
    const first = outcomes(7);
    expect(first.filter(Boolean).length).toBeGreaterThan(4);
    expect(first.filter((x) => !x).length).toBeGreaterThan(4);
    expect(outcomes(7)).toEqual(first);
    expect(outcomes(8)).not.toEqual(first);
  });

  test("for every bundled task the sampled patch command, run by bash in a copy of the repository, applies the gold fix", () => {
    const policy = new TaskPolicy(tasks, { successProbability: 1, seed: 0 });
    for (const t of tasks) {
      const messages: TemplateMessage[] = [{ role: "user", content: t.instruction }];
      const first = parseQwen3Output(scriptedCompletion(prompt(messages), DEFAULT_SCRIPT, policy)).toolCalls[0]!;
      messages.push({
        role: "assistant",
        content: "",
        tool_calls: [{ type: "function", id: first.id, function: { name: first.name, arguments: JSON.parse(first.arguments) } }],
      });
      messages.push({ role: "tool", tool_call_id: first.id, content: "(file contents)" });
      const second = parseQwen3Output(scriptedCompletion(prompt(messages), DEFAULT_SCRIPT, policy)).toolCalls[0]!;
      const command = (JSON.parse(second.arguments) as { command: string }).command;
      const work = mkdtempSync(join(tmpdir(), "polar-policy-"));
      try {
        cpSync(join(import.meta.dir, "../../tasks", t.task_id, "repo"), work, { recursive: true });
        const git = (args: string[]) => Bun.spawnSync(["git", ...args], { cwd: work, env: { ...process.env, ...BASE_COMMIT_ENV } });
        git(["init", "-q"]);
        git(["add", "-A"]);
        git(["commit", "-q", "-m", "base"]);
        const run = Bun.spawnSync(["bash", "-c", command], { cwd: work, stdout: "pipe", stderr: "pipe" });
        expect(run.stderr.toString()).toBe("");
        expect(run.exitCode).toBe(0);
        git(["add", "-A"]);
        expect(git(["diff", "--cached", "--binary", "HEAD"]).stdout.toString()).toBe(t.patch!);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
  }, 120_000);

  test("an imported exercise (hidden tests): the stub read, the reference solution or the wrong fix applied, the change compiled instead of the tests run", async () => {
    const imported = (await loadTaskFile(join(import.meta.dir, "../../tasks/exercism-python/tasks.jsonl"))).tasks;
    const exercise = imported.find((t) => t.task_id === "exercism-python-sieve")!;
    const solved = session(new TaskPolicy(imported, { successProbability: 1, seed: 0 }), "You are an agent.", exercise);
    expect(solved.commands).toEqual([
      "cat sieve.py",
      `git apply <<'POLAR_PATCH'\n${exercise.patch}POLAR_PATCH\ngit diff --stat`,
      "python3 -m py_compile sieve.py",
    ]);
    expect(solved.final).toBe("Done: the solution is in sieve.py.");
    const wrong = session(new TaskPolicy(imported, { successProbability: 0, seed: 0 }), "You are an agent.", exercise);
    expect(wrong.commands[1]).toBe(`git apply <<'POLAR_PATCH'\n${(exercise as { mock_wrong_patch?: string }).mock_wrong_patch}POLAR_PATCH\ngit diff --stat`);
    expect(wrong.commands[2]).toBe("python3 -m py_compile sieve.py");
  });

  test("a prompt without a bundled task's problem statement falls back to the script", () => {
    const policy = new TaskPolicy(tasks, { successProbability: 1, seed: 0 });
    const text = scriptedCompletion(prompt([{ role: "user", content: "Create out.txt" }]), DEFAULT_SCRIPT, policy);
    expect(JSON.parse(parseQwen3Output(text).toolCalls[0]!.arguments).command).toBe("echo hello > out.txt");
  });
});
