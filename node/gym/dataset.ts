// Why: a Gym dataset is a JSONL file of rows; a Polar task file becomes one by writing, per task,
// the prompt Gym knows (`responses_create_params.input`: the task's instruction), the agent it
// goes to (`agent_ref`) and the id that names the task on the node (`instance_id`), so Gym's
// collector and NeMo RL can send Polar's tasks unchanged (`polar gym rows`).
import type { Task } from "../../protocol/task.ts";

export interface GymDatasetRow {
  responses_create_params: { input: { role: "user"; content: string; type: "message" }[] };
  agent_ref: { type: "responses_api_agents"; name: string };
  instance_id: string;
}

export function gymRowOf(task: Task, agentName: string): GymDatasetRow {
  return {
    responses_create_params: { input: [{ role: "user", content: task.instruction, type: "message" }] },
    agent_ref: { type: "responses_api_agents", name: agentName },
    instance_id: task.task_id,
  };
}

/** The JSONL text of a dataset with one row per task, in the task file's order. */
export function gymDatasetJsonl(tasks: readonly Task[], agentName: string): string {
  return tasks.map((t) => `${JSON.stringify(gymRowOf(t, agentName))}\n`).join("");
}
