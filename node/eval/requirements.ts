// Why: a task that can never be scored on this node (no pytest in the sandbox, no node) must be
// refused before any rollout is spent on it, not run for minutes and then scored. A task states
// what its evaluation needs (`evaluator.requires`), or it is read off the evaluator's command;
// the node checks each need once per runtime, image and PATH, in a real sandbox of that image,
// and remembers the answer.
import { z } from "zod";
import { EVALUATOR_ALIASES, EvaluationRequirement, EvaluatorStrategy, type EvaluationDetail } from "../../protocol/evaluation.ts";
import type { EvaluatorSpec } from "../../protocol/rollout.ts";
import { RuntimeSpec, type RuntimeSpecInput } from "../../protocol/runtime.ts";
import type { RuntimeBackend } from "../runtime/types.ts";
import { evaluationDetail } from "./detail.ts";
import { evaluatorStrategy } from "./evaluate.ts";
import { EVALUATION_PATH, type SandboxSource } from "./sandbox-source.ts";

/** What a requirement check needs of a task (a Task, or a TaskRequest with its catalog defaults). */
export interface EvaluationNeeds {
  task_id: string;
  runtime?: RuntimeSpecInput | null;
  evaluator?: EvaluatorSpec | null;
}

/** Shell words that start no program of their own. */
const SHELL_WORDS = new Set(["cd", "export", "set", "true", "false", ":", "echo", "exec", "env", "test", "[", "exit", "unset", "ulimit", "umask", "timeout"]);

/** Programs (and `python3:module` for `python3 -m module`) one argv starts. */
function argvNeeds(argv: string[]): string[] {
  const words = argv.filter((w) => w !== "");
  let i = 0;
  while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || SHELL_WORDS.has(words[i]!))) {
    // `cd dir` and `timeout 60 cmd` take an argument that is not a program
    if (words[i] === "cd" || words[i] === "timeout") i++;
    i++;
  }
  const program = words[i];
  // Relative paths live in the task's repository, which exists only after prepare.
  if (!program || (program.includes("/") && !program.startsWith("/")) || !EvaluationRequirement.safeParse(program).success) return [];
  const needs = [program];
  const m = words.indexOf("-m", i + 1);
  if (/^python[\d.]*$/.test(program.split("/").pop()!) && m > 0 && words[m + 1] && !words[m + 1]!.startsWith("-")) {
    const need = `${program}:${words[m + 1]}`;
    if (EvaluationRequirement.safeParse(need).success) needs.push(need);
  }
  return needs;
}

/** What a shell command line needs: the program each of its simple commands starts. */
export function commandNeeds(command: string | string[]): string[] {
  if (Array.isArray(command)) return argvNeeds(command);
  const needs = command.split(/&&|\|\||[;|\n]/).flatMap((part) => argvNeeds(part.trim().split(/\s+/)));
  return [...new Set(needs)];
}

const CommandLike = z.looseObject({ test_command: z.string().optional(), command: z.union([z.string(), z.array(z.string())]).optional() });

/** The task's stated requirements, or those its evaluator implies (none for evaluators that run nothing). */
export function taskRequirements(task: EvaluationNeeds): string[] {
  if (task.evaluator?.requires) return task.evaluator.requires;
  const name = task.evaluator?.strategy ?? "none";
  const strategy = EvaluatorStrategy.safeParse(EVALUATOR_ALIASES[name] ?? name).data;
  if (strategy !== "swe" && strategy !== "command") return [];
  const config = CommandLike.safeParse(task.evaluator?.config ?? {});
  if (!config.success) return [];
  // swe applies the patches with git, then runs the test command.
  if (strategy === "swe") return [...new Set(["git", ...(config.data.test_command ? commandNeeds(config.data.test_command) : [])])];
  return config.data.command === undefined ? [] : commandNeeds(config.data.command);
}

export interface MissingRequirement {
  requirement: string;
  /** What the probe found, e.g. "python3 cannot import pytest". */
  reason: string;
}

/** A task this node cannot evaluate: what is missing, where, in one sentence. */
export interface Unevaluable {
  task_id: string;
  missing: MissingRequirement[];
  message: string;
}

function quote(word: string): string {
  return `'${word}'`; // requirements match EvaluationRequirement: no quotes or spaces in them
}

/** One shell line per requirement, printing `polar-requirement <i> ok|no-program|no-module`. */
function probeScript(requirements: string[]): string {
  return requirements
    .map((req, i) => {
      const [program, module] = req.split(":") as [string, string | undefined];
      const has = `command -v ${quote(program)} >/dev/null 2>&1`;
      const result = (word: string) => `echo "polar-requirement ${i} ${word}"`;
      if (!module) return `if ${has}; then ${result("ok")}; else ${result("no-program")}; fi`;
      return `if ! ${has}; then ${result("no-program")}; elif ${quote(program)} -c ${quote(`import ${module}`)} >/dev/null 2>&1; then ${result("ok")}; else ${result("no-module")}; fi`;
    })
    .join("\n");
}

function describeMissing(requirement: string, found: string): string {
  const [program, module] = requirement.split(":") as [string, string | undefined];
  if (found === "no-program") return `${program} is not on the evaluation PATH`;
  return `${program} cannot import ${module}`;
}

export interface RequirementCheckOptions {
  /** Where probe sandboxes come from (the node's pool, or a runtime). */
  source: SandboxSource;
  /** The runtime the node runs sandboxes with (a spec's `backend` overrides it). */
  backend: RuntimeBackend;
  /** Runtime fields every rollout starts from (the pipeline's defaultRuntime). */
  defaultRuntime?: RuntimeSpecInput;
}

/**
 * Checks tasks' requirements, once per (runtime, image, PATH, requirement): concurrent checks of
 * the same need share one probe; a probe that could not run (no sandbox) is not remembered.
 */
export class RequirementCheck {
  private readonly known = new Map<string, Promise<string | null>>();

  constructor(private readonly options: RequirementCheckOptions) {}

  /** Null when every requirement is met (or the task states none); what is missing otherwise. */
  async check(task: EvaluationNeeds, signal?: AbortSignal): Promise<Unevaluable | null> {
    const requirements = taskRequirements(task);
    if (requirements.length === 0) return null;
    const spec = RuntimeSpec.parse({ ...this.options.defaultRuntime, ...task.runtime, prepare: [] });
    const path = task.evaluator?.env?.PATH ?? EVALUATION_PATH;
    const backend = spec.backend ?? this.options.backend;
    const where = `${backend}|${spec.image}|${path}`;
    const fresh = requirements.filter((r) => !this.known.has(`${where}|${r}`));
    if (fresh.length > 0) {
      const probe = this.probe(spec, path, fresh, signal);
      fresh.forEach((req, i) => {
        const key = `${where}|${req}`;
        const answer = probe.then((found) => found[i]!);
        this.known.set(key, answer);
        answer.catch(() => this.known.delete(key));
      });
    }
    const answers = await Promise.all(requirements.map((r) => this.known.get(`${where}|${r}`)!.catch(() => null)));
    const missing = requirements.flatMap((requirement, i) => (answers[i] ? [{ requirement, reason: answers[i]! }] : []));
    if (missing.length === 0) return null;
    const place = backend === "process" ? "in a process sandbox on this host" : `in image ${spec.image}`;
    const hint =
      backend === "process" ? "install it on this host (bash scripts/setup.sh installs what the bundled tasks need)" : `add it to the image ${spec.image}`;
    const message = `task ${task.task_id} cannot be evaluated on this node: its evaluation needs ${missing.map((m) => m.requirement).join(", ")}, and ${missing.map((m) => m.reason).join("; ")} ${place}; ${hint}`;
    return { task_id: task.task_id, missing, message };
  }

  /** Per requirement: null when present, the reason otherwise. Throws when no sandbox could run the probe. */
  private async probe(spec: RuntimeSpec, path: string, requirements: string[], signal?: AbortSignal): Promise<(string | null)[]> {
    const sandbox = await this.options.source.take(spec, { rollout_id: "requirement-check" }, signal);
    try {
      const run = await sandbox.exec({ command: ["/bin/sh", "-c", probeScript(requirements)], env: { PATH: path }, timeoutMs: 60_000, signal });
      const found = new Map<number, string>();
      for (const match of run.stdout.matchAll(/^polar-requirement (\d+) (\S+)$/gm)) found.set(Number(match[1]), match[2]!);
      if (found.size !== requirements.length)
        throw new Error(`requirement probe printed ${found.size} of ${requirements.length} answers (exit ${run.exit_code}): ${run.stderr.slice(0, 300)}`);
      return requirements.map((req, i) => (found.get(i) === "ok" ? null : describeMissing(req, found.get(i)!)));
    } finally {
      await this.options.source.release(sandbox).catch(() => undefined);
    }
  }
}

/** The evaluation detail of a rollout refused for a missing requirement (its result's metadata.evaluation). */
export function requirementDetail(task: EvaluationNeeds, problem: Unevaluable): EvaluationDetail {
  return evaluationDetail(evaluatorStrategy(task), { status: "invalid", evaluation_error: "requirement_missing", reason: problem.message });
}
