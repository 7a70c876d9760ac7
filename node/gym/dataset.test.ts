import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { GymRunRequest } from "../../protocol/gym.ts";
import { BUNDLED_TASKS_FILE, loadTaskCatalog } from "../api/task-catalog.ts";
import { gymDatasetJsonl } from "./dataset.ts";
import { resolveTask } from "./task-resolution.ts";

const EXAMPLE = resolve(import.meta.dir, "../../integrations/nemo_gym/data/example.jsonl");

test("the committed example dataset is `polar gym rows` of four bundled tasks, and each row resolves to its task", async () => {
  const catalog = await loadTaskCatalog(BUNDLED_TASKS_FILE);
  const text = readFileSync(EXAMPLE, "utf8");
  const ids = text
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { instance_id: string }).instance_id);
  expect(ids).toHaveLength(4);
  expect(text).toBe(
    gymDatasetJsonl(
      ids.map((id) => catalog.get(id)!),
      "polar_agent",
    ),
  );
  for (const line of text.trim().split("\n")) {
    const row = GymRunRequest.parse(JSON.parse(line));
    const resolved = resolveTask(row, (id) => catalog.get(id));
    expect(resolved.ok).toBe(true);
    if (resolved.ok) {
      expect(resolved.task.task_id).toBe(row.instance_id as string);
      expect(resolved.instruction).toBe(resolved.task.instruction);
    }
  }
});
