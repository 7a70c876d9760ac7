// Why: task files are the one place Polar's TaskRequest fields (task_id, instruction, runtime,
// evaluator, metadata) meet SWE-bench / SWE-Gym instance fields (instance_id, problem_statement,
// base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS); one row schema lets existing task
// files load unchanged, keeps unknown fields, and gives every consumer the same normalised task.
import { z } from "zod";
import { EvaluatorSpec, TaskMetadata } from "./rollout.ts";
import { PrepareAction, RuntimeSpec } from "./runtime.ts";

/** SWE-bench stores test lists as JSON strings of lists; SWE-Gym and ours as lists. */
const TestList = z
  .union([
    z.array(z.string()),
    z.string().transform((text, ctx) => {
      try {
        const parsed = z.array(z.string()).safeParse(JSON.parse(text));
        if (parsed.success) return parsed.data;
      } catch {
        // fall through to the issue below
      }
      ctx.addIssue({ code: "custom", message: "expected a list of test names or a JSON string of one" });
      return z.NEVER;
    }),
  ])
  .default([]);

/** Polar's RuntimeSpec plus the steps run only in the evaluation sandbox. */
export const TaskRuntime = RuntimeSpec.extend({ eval_prepare: z.array(PrepareAction).default([]) });
export type TaskRuntime = z.infer<typeof TaskRuntime>;

const TaskRow = z
  .looseObject({
    task_id: z.string().min(1).optional(),
    instance_id: z.string().min(1).optional(),
    instruction: z.string().optional(),
    problem_statement: z.string().optional(),
    repo: z.string().optional(),
    base_commit: z.string().optional(),
    /** The gold patch. */
    patch: z.string().optional(),
    test_patch: z.string().optional(),
    FAIL_TO_PASS: TestList,
    PASS_TO_PASS: TestList,
    runtime: TaskRuntime.nullable().optional(),
    evaluator: EvaluatorSpec.nullable().optional(),
    metadata: TaskMetadata.default({}),
  })
  .superRefine((row, ctx) => {
    if (row.task_id === undefined && row.instance_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["task_id"], message: "a task needs task_id or instance_id" });
    }
    if (row.instruction === undefined && row.problem_statement === undefined) {
      ctx.addIssue({ code: "custom", path: ["instruction"], message: "a task needs instruction or problem_statement" });
    }
  });

/** One task-file row, normalised: task_id and instruction always set. */
export const Task = TaskRow.transform((row) => ({
  ...row,
  task_id: (row.task_id ?? row.instance_id)!,
  instruction: (row.instruction ?? row.problem_statement)!,
}));
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;
