// Why: the mock engine must produce agents that sometimes fix a task's bug and sometimes do not
// (bundled tasks and imported ones alike), through any harness's own shell tool, with no GPU. Given a prompt that contains a
// task's problem statement it plays the steps an agent takes — read the code, apply the fix (the
// gold patch via a heredoc and `git apply`) or a plausible wrong one, run the tests, finish.
// The choice is made once per session at its first turn (seeded, deterministic: engine seed,
// the first prompt and how many sessions with that prompt came before) and read back later from
// the agent's own first command, as a real model conditions on its history.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Task } from "../../protocol/task.ts";
import { patchFiles } from "../eval/collect-patch.ts";
import { parseTaskLines } from "../../lib/task-file.ts";
import { LruMap } from "../lru-map.ts";
import type { PromptFacts } from "./policy.ts";
import type { ScriptStep } from "./script.ts";

interface SolvableTask {
  id: string;
  /** Start of the problem statement, whitespace collapsed: how the task is found in a prompt. */
  key: string;
  title: string;
  /** Source files the fix touches (what the agent reads). */
  files: string[];
  goldPatch: string;
  wrongPatch: string | undefined;
  testCommand: string | undefined;
  /** The task's tests are hidden from the agent (an imported exercise): the check it runs instead. */
  checkCommand: string | undefined;
}

export interface TaskPolicyOptions {
  /** Chance that a session applies the gold patch (else the wrong one). */
  successProbability: number;
  seed: number;
  /** Decides instead of `successProbability` and marks the first reply (trainable-policy.ts). */
  chooser?: SolveChooser;
}

/** A learnable choice between fixing and not fixing a task, made once per session. */
export interface SolveChooser {
  /** Whether the session fixes the task, from its uniform draw `u` in [0, 1). */
  fixes(taskId: string, u: number): boolean;
  /** The first turn's step as the chooser shows its choice. */
  mark(step: ScriptStep, fixes: boolean): ScriptStep;
}

/** The first command of a session that will not fix the bug (the success path uses `cat`). */
const WRONG_PATH_READ = "head -n 400";
const KEY_CHARS = 160;
const HEREDOC = "POLAR_PATCH";

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function fnv(text: string, h = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A 32-bit mix of the inputs as a number in [0, 1). */
function unitFrom(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
  }
  return h / 2 ** 32;
}

function solvable(task: Task): SolvableTask | undefined {
  const statement = task.problem_statement ?? task.instruction;
  if (!task.patch || collapse(statement) === "") return undefined;
  const testFiles = new Set(patchFiles(task.test_patch ?? ""));
  const config = (task.evaluator?.config ?? {}) as { test_command?: unknown };
  const wrong = (task as { mock_wrong_patch?: unknown }).mock_wrong_patch;
  const check = (task as { mock_check_command?: unknown }).mock_check_command;
  return {
    id: task.task_id,
    key: collapse(statement).slice(0, KEY_CHARS),
    title: statement
      .split("\n")[0]!
      .replace(/^#+\s*/, "")
      .trim(),
    files: patchFiles(task.patch).filter((f) => !testFiles.has(f)),
    goldPatch: task.patch.endsWith("\n") ? task.patch : `${task.patch}\n`,
    wrongPatch: typeof wrong === "string" && wrong !== "" ? wrong : undefined,
    testCommand: typeof config.test_command === "string" ? config.test_command : undefined,
    checkCommand: typeof check === "string" && check !== "" ? check : undefined,
  };
}

/** The conversation from the first assistant turn on (system prompts and tool docs left out). */
function ownTurns(promptText: string): string {
  const first = promptText.indexOf("<|im_start|>assistant");
  return first === -1 ? "" : promptText.slice(first);
}

/** The third step: run the tests, or the task's own check when its tests are hidden from the agent. */
function checkStep(task: SolvableTask, think: string): ScriptStep {
  if (task.checkCommand)
    return { think: "The tests are not in the repository; let me at least check the change.", text: "Checking the change.", shell: task.checkCommand };
  return { think, text: "Running the tests.", shell: task.testCommand ?? "git diff" };
}

function applyCommand(patch: string): string {
  return `git apply <<'${HEREDOC}'\n${patch}${HEREDOC}\ngit diff --stat`;
}

export class TaskPolicy {
  private readonly tasks: SolvableTask[];
  /** Sessions seen per first prompt, so samples of one task in a group differ. */
  private readonly sessionsSeen = new LruMap<number, number>(10_000);

  constructor(
    tasks: Task[],
    private readonly options: TaskPolicyOptions,
  ) {
    this.tasks = tasks.map(solvable).filter((t): t is SolvableTask => t !== undefined);
  }

  /** Loads a task file (JSONL); rows that do not parse are skipped, as the evaluator would. */
  static fromFile(path: string, options: TaskPolicyOptions): TaskPolicy {
    const full = resolve(path);
    return new TaskPolicy(parseTaskLines(readFileSync(full, "utf8"), dirname(full)).tasks, options);
  }

  get size(): number {
    return this.tasks.length;
  }

  get taskIds(): string[] {
    return this.tasks.map((t) => t.id);
  }

  /** The step for this prompt, or undefined when no known task's problem statement is in it. */
  step(promptText: string, facts: PromptFacts): ScriptStep | undefined {
    const prompt = collapse(promptText);
    const task = this.tasks.find((t) => prompt.includes(t.key));
    if (!task) return undefined;
    const fixes = facts.turn === 0 ? this.decide(task, promptText) : !ownTurns(promptText).includes(WRONG_PATH_READ);
    const step = fixes ? this.solvingStep(task, facts.turn) : this.wrongStep(task, facts.turn);
    return facts.turn === 0 && this.options.chooser ? this.options.chooser.mark(step, fixes) : step;
  }

  private decide(task: SolvableTask, promptText: string): boolean {
    const promptHash = fnv(promptText);
    const seen = this.sessionsSeen.get(promptHash) ?? 0;
    this.sessionsSeen.set(promptHash, seen + 1);
    const u = unitFrom(this.options.seed, promptHash, seen);
    return this.options.chooser ? this.options.chooser.fixes(task.id, u) : u < this.options.successProbability;
  }

  private solvingStep(task: SolvableTask, turn: number): ScriptStep {
    switch (turn) {
      case 0:
        return {
          think: `The report: "${task.title}". I should read the code involved first.`,
          text: "Let me look at the code.",
          shell: `cat ${task.files.join(" ")}`,
        };
      case 1:
        return { think: "I see what causes it. I'll write the fix as a patch and apply it.", text: "Applying the fix.", shell: applyCommand(task.goldPatch) };
      case 2:
        return checkStep(task, "Now run the tests to check nothing else broke.");
      default:
        return task.checkCommand
          ? { think: "The solution is in place.", text: `Done: the solution is in ${task.files.join(", ")}.` }
          : {
              think: "The fix is in and the tests pass.",
              text: `Fixed: ${task.title}. The change is in ${task.files.join(", ")} and the existing tests pass.`,
            };
    }
  }

  private wrongStep(task: SolvableTask, turn: number): ScriptStep {
    switch (turn) {
      case 0:
        return {
          think: `The report: "${task.title}". Let me skim the code.`,
          text: "Let me look at the code.",
          shell: `${WRONG_PATH_READ} ${task.files.join(" ")}`,
        };
      case 1:
        return task.wrongPatch
          ? { think: "I think I see it; a small change should do.", text: "Applying a fix.", shell: applyCommand(task.wrongPatch) }
          : { think: "I am not sure where the problem is.", text: "Checking the state of the repository.", shell: "git status --short" };
      case 2:
        return checkStep(task, "Let me run the tests.");
      default:
        return { think: "That should address it.", text: `I changed ${task.files[0] ?? "the code"}; this should fix "${task.title}".` };
    }
  }
}
