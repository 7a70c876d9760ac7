// A standalone `polar node` (process runtime, mini harness, mock engine) observed as an operator
// would: /metrics parsed as Prometheus text before and after a real task, /events delivering
// NVIDIA Polar's events in order for its sessions, the dashboard snapshot, and the drill-down of a
// task and one rollout (stages, the conversation from the gateway's recorded calls, the traces).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFeed, type ParsedFrame } from "../lib/event-feed.ts";
import { DashboardSnapshot, GroupDetail, RolloutDetail } from "../protocol/admin.ts";
import { waitFor } from "./support/coordinator/cluster.ts";
import { parsePrometheusText, sampleSum, sampleValue } from "./helpers/prometheus-text.ts";
import { ADMIN_TOKEN, pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";

let stack: NodeStack;
beforeAll(async () => {
  stack = await startNodeStack(
    { runtime: "process", workers: { init: 2, run: 2, postrun: 2, ready_backlog: 1 }, sampling: { max_tokens_cap: 2048 } },
    {},
    { seed: 3 },
  );
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const scrape = async () => parsePrometheusText(await (await fetch(`${stack.node.url}/metrics`)).text());
const admin = async (path: string) => {
  const res = await fetch(`${stack.node.url}${path}`, { headers: auth });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

test("a real task moves the node's metrics and arrives on /events as task.created → session.state_changed … → task.completed", async () => {
  expect((await fetch(`${stack.node.url}/events`)).status).toBe(401);
  const before = await scrape();
  expect(sampleSum(before, "polar_gateway_calls_total")).toBe(0);
  expect(sampleValue(before, "polar_gateway_calls_in_flight")).toBe(0);
  expect(before.get("polar_sandbox_handout_seconds")!.type).toBe("histogram");

  const frames: ParsedFrame[] = [];
  const abort = new AbortController();
  const res = await fetch(`${stack.node.url}/events`, { headers: auth, signal: abort.signal });
  void readFeed(res.body!, (f) => void frames.push(f)).catch(() => undefined);
  await waitFor(() => frames.length > 0, "hello");

  const submitted = await submit(stack.node.url, { task_id: "js-leap-year-century", agent: { harness: "mini" }, num_samples: 2 });
  expect(submitted.status).toBe(200);
  const status = await pollTask(stack.node.url, "js-leap-year-century");
  expect(status.results.length).toBe(2);
  await waitFor(() => frames.some((f) => f.type === "group.summary"), "the task's summary", 30_000);
  abort.abort();

  const types = frames.map((f) => f.type);
  expect(types[0]).toBe("hello");
  const created = types.indexOf("task.created");
  const completed = types.indexOf("task.completed");
  expect(frames[created]!.data).toMatchObject({ task_id: "js-leap-year-century", status: "running", harness: "mini", num_samples: 2 });
  expect(frames[completed]!.data).toMatchObject({ task_id: "js-leap-year-century", status: "completed", completed_sessions: 2 });
  const sessions = frames[created]!.data.session_ids as string[];
  for (const id of sessions) {
    const statuses = frames.filter((f) => f.type === "session.state_changed" && f.data.session_id === id).map((f) => f.data.status);
    expect(statuses).toEqual(["REGISTERED", "INITIALIZING", "READY", "RUNNING", "POST_RUN", "COMPLETED"]);
    const last = frames.findLastIndex((f) => f.type === "session.state_changed" && f.data.session_id === id);
    expect(last).toBeGreaterThan(created);
    expect(last).toBeLessThan(completed);
  }
  expect(frames.filter((f) => f.type === "task.updated").map((f) => f.data.completed_sessions)).toEqual([1, 2]);
  const calls = frames.filter((f) => f.type === "gateway.call");
  expect(calls.length).toBeGreaterThan(0);
  expect(calls.every((f) => f.data.error_code === null && (f.data.completion_tokens as number) > 0)).toBe(true);

  const after = await scrape();
  const rewards = status.results.map((r) => r.metadata.reward as number);
  expect(sampleSum(after, "polar_gateway_calls_total", { code: "ok" })).toBe(calls.length);
  expect(sampleSum(after, "polar_gateway_call_duration_seconds_count")).toBe(calls.length);
  expect(sampleValue(after, "polar_gateway_tokens_total", { kind: "completion" })).toBe(calls.reduce((a, f) => a + (f.data.completion_tokens as number), 0));
  expect(sampleValue(after, "polar_node_rollouts_finished_total", { status: "COMPLETED" })).toBe(2);
  expect(sampleValue(after, "polar_rollout_stage_duration_seconds_count", { stage: "run" })).toBe(2);
  expect(sampleValue(after, "polar_node_tasks_finished_total", { status: "completed" })).toBe(1);
  expect(sampleSum(after, "polar_sandbox_handout_seconds_count")).toBeGreaterThanOrEqual(2);
  expect(sampleValue(after, "polar_node_rollout_transitions_total", { to: "RUN" })).toBe(2);
  const trainable = status.results.flatMap((r) => r.trajectory.traces).reduce((a, t) => a + t.loss_mask.filter((m) => m === 1).length, 0);
  expect(sampleValue(after, "polar_result_tokens_total", { part: "trainable" })).toBe(trainable);

  // The dashboard's view of the same run.
  const snap = DashboardSnapshot.parse(await admin("/v1/admin/dashboard"));
  expect(snap.service).toBe("node");
  expect(snap.results.map((r) => r.reward).sort()).toEqual([...rewards].sort());
  expect(snap.groups.at(-1)).toMatchObject({ task_id: "js-leap-year-century", n: 2 });
  expect(snap.nodes[0]).toMatchObject({ node_id: stack.node.config.node_id, status: "standalone", slots: 6, calls_in_flight: 0, gateway_calls: calls.length });
  const task = GroupDetail.parse(await admin("/v1/admin/tasks/js-leap-year-century"));
  expect(task.rollouts.map((r) => r.rollout_id).sort()).toEqual([...sessions].sort());
  const detail = RolloutDetail.parse(await admin(`/v1/admin/rollouts/${sessions[0]}`));
  expect(detail.timeline.map((s) => s.state)).toEqual(["QUEUED", "INIT", "READY", "RUN", "POSTRUN", "COMPLETED"]);
  expect(detail.stages.map((s) => s.stage).slice(0, 5)).toEqual(["init", "ready_queue", "run", "postrun_queue", "postrun"]);
  expect(detail.messages!.length).toBeGreaterThan(1);
  expect(detail.messages![0]!.role).toBe("system");
  expect(detail.messages!.at(-1)!.role).toBe("assistant");
  const traces = (detail.result!.trajectory as { traces: unknown[] }).traces;
  expect(traces.length).toBeGreaterThan(0);
  expect((await fetch(`${stack.node.url}/v1/admin/rollouts/nope`, { headers: auth })).status).toBe(404);
}, 300_000);
