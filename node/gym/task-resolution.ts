// Why: a Gym dataset row says what to solve in Gym's terms (a Responses prompt plus whatever
// fields the dataset carries); Polar runs a task. This turns a row into the task (an inline
// `polar_task`, or a task of the node's task file named by the row) and the harness's
// instruction, and refuses, naming the field, what a black-box harness cannot be given.
import { Task } from "../../protocol/task.ts";
import { GymInputMessage, type GymRunRequest } from "../../protocol/gym.ts";
import { fieldError, parseLikePydantic, type ValidationDetail } from "../../lib/fastapi-errors.ts";
import { EVALUATOR_ALIASES } from "../../protocol/evaluation.ts";

export interface ResolvedTask {
  /** The task as Polar runs it (its own id: the task file's or the inline task's). */
  task: Task;
  /** What the harness is told: the row's prompt text, or the task's instruction when the prompt is empty. */
  instruction: string;
}

export type Resolution = ({ ok: true } & ResolvedTask) | { ok: false; detail: ValidationDetail[] };

/** Keys of a row that may name a task of the node's task file, in the order they are tried. */
export const TASK_ID_KEYS = ["polar_task_id", "task_id", "instance_id"] as const;

type Refusal = { ok: false; detail: ValidationDetail[] };
const refuse = (loc: (string | number)[], msg: string, type = "value_error"): Refusal => ({ ok: false, ...fieldError(loc, msg, type) });

/**
 * The prompt's text: `instructions`, then each message's text in order (system and developer
 * turns included), blank-line separated. Earlier assistant turns, tool items and non-text parts
 * cannot be replayed into a harness that starts from its own first turn.
 */
export function promptText(row: GymRunRequest): { ok: true; text: string } | Refusal {
  const params = row.responses_create_params;
  const parts: string[] = [];
  if (params.instructions) parts.push(params.instructions);
  if (typeof params.input === "string") {
    parts.push(params.input);
    return { ok: true, text: parts.join("\n\n").trim() };
  }
  for (const [i, raw] of params.input.entries()) {
    const loc = ["responses_create_params", "input", i];
    const item = GymInputMessage.safeParse(raw);
    if (!item.success || (raw.type !== undefined && raw.type !== "message")) {
      return refuse(
        [...loc, "type"],
        `input items of type "${String(raw.type)}" cannot be given to a harness, which starts the conversation itself; send message items only`,
      );
    }
    const { role, content } = item.data;
    if (role === "assistant") return refuse([...loc, "role"], "assistant turns cannot be replayed into a harness, which starts the conversation itself");
    if (typeof content === "string") {
      parts.push(content);
      continue;
    }
    for (const [j, part] of content.entries()) {
      if ((part.type !== "input_text" && part.type !== "text") || part.text === undefined) {
        return refuse([...loc, "content", j, "type"], `content parts of type "${part.type}" cannot be given to a harness; send input_text parts`);
      }
      parts.push(part.text);
    }
  }
  return { ok: true, text: parts.join("\n\n").trim() };
}

function namedTaskId(row: GymRunRequest): { key: (string | number)[]; id: string } | undefined {
  for (const key of TASK_ID_KEYS) {
    const value = row[key];
    if (typeof value === "string" && value !== "") return { key: [key], id: value };
  }
  const metadata = row.responses_create_params.metadata ?? {};
  for (const key of ["task_id", "instance_id"] as const) {
    const value = metadata[key];
    if (value) return { key: ["responses_create_params", "metadata", key], id: value };
  }
  return undefined;
}

function withEvaluator(task: Task, loc: (string | number)[]): Refusal | undefined {
  const name = task.evaluator?.strategy ?? "none";
  if ((EVALUATOR_ALIASES[name] ?? name) === "none") {
    return refuse(
      [...loc, "evaluator"],
      `task ${task.task_id} has no evaluator: a Gym rollout needs a real reward (swe, command or session_completed)`,
      "missing",
    );
  }
  return undefined;
}

/** The row's task and instruction; `fileTask` looks a task up in the node's task file. */
export function resolveTask(row: GymRunRequest, fileTask: (taskId: string) => Task | undefined): Resolution {
  const prompt = promptText(row);
  if (!prompt.ok) return prompt;

  if (row.polar_task !== undefined) {
    const inline = { ...row.polar_task };
    if (inline.instruction === undefined && inline.problem_statement === undefined && prompt.text !== "") inline.instruction = prompt.text;
    const parsed = parseLikePydantic(Task, inline);
    if (!parsed.ok) {
      return { ok: false, detail: parsed.detail.map((d) => ({ ...d, loc: ["body", "polar_task", ...d.loc.slice(1)] })) };
    }
    return withEvaluator(parsed.data, ["polar_task"]) ?? { ok: true, task: parsed.data, instruction: prompt.text || parsed.data.instruction };
  }

  const named = namedTaskId(row);
  if (!named) {
    return refuse(
      [],
      `the row names no task: give polar_task (an inline task) or one of ${TASK_ID_KEYS.join(", ")} (a task of the node's task file)`,
      "missing",
    );
  }
  const task = fileTask(named.id);
  if (!task) return refuse(named.key, `no task "${named.id}" in the node's task file (polar gym --tasks, or node.tasks in the agent config)`);
  return withEvaluator(task, named.key) ?? { ok: true, task, instruction: prompt.text || task.instruction };
}
