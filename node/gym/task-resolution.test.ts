import { describe, expect, test } from "bun:test";
import { GymRunRequest } from "../../protocol/gym.ts";
import { Task } from "../../protocol/task.ts";
import { promptText, resolveTask } from "./task-resolution.ts";

const FILE_TASK = Task.parse({ task_id: "t1", instruction: "Fix the parser.", evaluator: { strategy: "swe" } });
const fileTask = (id: string) => (id === "t1" ? FILE_TASK : undefined);
const row = (extra: Record<string, unknown>, input: unknown = []) => GymRunRequest.parse({ responses_create_params: { input }, ...extra });

describe("the harness's instruction", () => {
  test("instructions, then system, developer and user messages in order, blank-line separated; string content parts joined", () => {
    const r = GymRunRequest.parse({
      responses_create_params: {
        instructions: "Be brief.",
        input: [
          { role: "system", content: "You fix bugs." },
          { role: "developer", content: [{ type: "input_text", text: "Run the tests." }] },
          { type: "message", role: "user", content: "The parser drops a field." },
        ],
      },
    });
    expect(promptText(r)).toEqual({ ok: true, text: "Be brief.\n\nYou fix bugs.\n\nRun the tests.\n\nThe parser drops a field." });
  });

  test("a string input is the prompt", () => {
    expect(promptText(row({}, "Fix it."))).toEqual({ ok: true, text: "Fix it." });
  });

  test("an empty prompt leaves the task's instruction; a prompt replaces it", () => {
    expect(resolveTask(row({ instance_id: "t1" }), fileTask)).toMatchObject({ ok: true, instruction: "Fix the parser." });
    expect(resolveTask(row({ instance_id: "t1" }, "Fix the CSV parser."), fileTask)).toMatchObject({ ok: true, instruction: "Fix the CSV parser." });
  });
});

describe("which task", () => {
  test("polar_task_id, task_id, instance_id, then responses_create_params.metadata", () => {
    expect(resolveTask(row({ polar_task_id: "t1", task_id: "nope" }), fileTask).ok).toBe(true);
    expect(resolveTask(row({ task_id: "t1" }), fileTask).ok).toBe(true);
    expect(resolveTask(GymRunRequest.parse({ responses_create_params: { input: [], metadata: { instance_id: "t1" } } }), fileTask).ok).toBe(true);
    expect(resolveTask(row({ task_id: "nope" }), fileTask)).toMatchObject({ ok: false, detail: [{ loc: ["body", "task_id"] }] });
  });

  test("an inline task takes its instruction from the prompt when it has none; its fields are checked where they are", () => {
    const ok = resolveTask(row({ polar_task: { task_id: "inline", evaluator: { strategy: "session_completed" } } }, "Say hi."), fileTask);
    expect(ok).toMatchObject({ ok: true, instruction: "Say hi.", task: { task_id: "inline", instruction: "Say hi." } });
    const bad = resolveTask(
      row({ polar_task: { task_id: "inline", instruction: "x", runtime: { prepare: [{ type: "nope" }] }, evaluator: { strategy: "swe" } } }),
      fileTask,
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.detail[0]!.loc.slice(0, 4)).toEqual(["body", "polar_task", "runtime", "prepare"]);
  });
});
