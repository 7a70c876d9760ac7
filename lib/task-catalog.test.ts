import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { TaskRequest } from "../protocol/rollout.ts";
import { requestOverTask, TaskCatalog, taskOfRequest } from "./task-catalog.ts";

const row = {
  task_id: "t1",
  instruction: "from the row",
  runtime: { image: "img" },
  evaluator: { strategy: "swe" },
  FAIL_TO_PASS: ["test_a"],
  metadata: { language: "python", group_id: "row" },
};

describe("a request over a task row", () => {
  test("the request's fields win, an explicit null included; omitted ones come from the row; metadata keys merge", () => {
    const merged = requestOverTask({ task_id: "t1", agent: { harness: "mini" }, evaluator: null, metadata: { group_id: 3 } }, row);
    expect(merged).toMatchObject({
      instruction: "from the row",
      runtime: { image: "img" },
      evaluator: null,
      FAIL_TO_PASS: ["test_a"],
      metadata: { language: "python", group_id: 3 },
    });
    expect(requestOverTask({ task_id: "x" }, undefined)).toEqual({ task_id: "x" });
    // A metadata that is not an object stays as sent, for the schema to refuse.
    expect(requestOverTask({ task_id: "t1", metadata: [1] }, row).metadata).toEqual([1]);
  });

  test("the task an evaluator reads is the same merge", () => {
    const request = TaskRequest.parse({ task_id: "t1", instruction: "mine", agent: { harness: "mini" }, metadata: { group_id: 1 } });
    const task = taskOfRequest(request, TaskCatalog.of([row as never]).get("t1"));
    expect(task).toMatchObject({
      task_id: "t1",
      instruction: "mine",
      FAIL_TO_PASS: ["test_a"],
      runtime: { image: "img" },
      metadata: { language: "python", group_id: 1 },
    });
  });

  test("the bundled task file loads with its folder as the base of relative sources", async () => {
    const { catalog, issues } = await TaskCatalog.load(resolve(import.meta.dir, "../tasks/tasks.jsonl"));
    expect(issues).toEqual([]);
    expect(catalog.baseDir).toBe(resolve(import.meta.dir, "../tasks"));
    const upload = catalog.get("js-leap-year-century")!.runtime!.prepare.find((a) => a.type === "upload_dir");
    expect(upload && "source" in upload && upload.source).toBe(resolve(import.meta.dir, "../tasks/js-leap-year-century/repo"));
  });
});
