// `polar gym` against a live node (process runtime, the real mini agent, the mock engine with
// the bundled tasks' solving policy): rows written as Gym's collector sends them, answers read as
// NeMo RL reads them (test/helpers/nemo-rl-consumer.ts). Solved and unsolved rollouts with real
// rewards; unknown keys refused; an agent timeout and an infrastructure failure with mask_sample
// and failure_kind; a live session whose calls are not one exact sequence; aggregate metrics.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GymAggregateMetrics, GymRunResult } from "../protocol/gym.ts";
import type { Hono } from "hono";
import { BUNDLED_TASKS_FILE, loadTaskCatalog } from "../node/api/task-catalog.ts";
import { settingsFromBlock, type GymAgentConfig } from "../node/gym/config.ts";
import { httpPolarRollouts } from "../node/gym/polar-client.ts";
import { gymRoutes } from "../node/gym/routes.ts";
import { GYM_BODY_LIMITS, startGymAgent, type RunningGymAgent } from "../node/gym/server.ts";
import { startMockEngine, type RunningMockEngine } from "../node/mock-engine/index.ts";
import { consumeAsNemoRl, NemoRlRejected } from "./helpers/nemo-rl-consumer.ts";
import { gymRow, strippedForAggregation, userMessage } from "./helpers/gym-rows.ts";

const ADMIN_TOKEN = "gym-e2e-admin-token-0123456789";
const SOLVABLE = "py-csv-trailing-empty-field";
const catalog = await loadTaskCatalog(BUNDLED_TASKS_FILE);
const instructionOf = (id: string) => catalog.get(id)!.instruction;

let engine: RunningMockEngine;
let agent: RunningGymAgent;

beforeAll(async () => {
  // Prompts holding a bundled task's statement get the solving policy (gold patch in half the
  // sessions); any other prompt gets this script: a command that outlasts an agent timeout.
  engine = await startMockEngine({
    port: 0,
    tasks: BUNDLED_TASKS_FILE,
    successProbability: 0.5,
    script: { steps: [{ think: "The build takes a while.", shell: "sleep 30" }, { text: "Done." }] },
  });
  const dir = mkdtempSync(join(tmpdir(), "polar-gym-e2e-"));
  const settings = settingsFromBlock(
    {
      harness: "mini",
      agent_timeout_seconds: 300,
      node: {
        admin_token: ADMIN_TOKEN,
        db: join(dir, "node.db"),
        node_id: `gym-e2e-${process.pid}`,
        runtime: "process",
        workers: { init: 4, run: 4, postrun: 2, ready_backlog: 2 },
        sampling: { max_tokens_cap: 4096 },
      },
    },
    { policy_base_url: `${engine.url}/v1`, policy_model_name: "Qwen/Qwen3-8B" },
    "test",
  );
  agent = await startGymAgent(settings);
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await engine?.stop();
}, 60_000);

/** The same node behind another agent configuration (another Gym agent server, in process). */
function variant(overrides: Partial<GymAgentConfig>): Hono {
  return gymRoutes({
    config: { ...agent.settings.agent, ...overrides },
    polar: httpPolarRollouts(agent.node.url, ADMIN_TOKEN),
    catalog: agent.catalog,
    nodeId: agent.node.config.node_id,
    bodyLimits: GYM_BODY_LIMITS,
  });
}

async function run(body: unknown, app?: Hono): Promise<{ status: number; json: any }> {
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) };
  const res = app ? await app.fetch(new Request("http://gym/run", init)) : await fetch(`${agent.url}/run`, init);
  return { status: res.status, json: await res.json() };
}

const solvableRow = (rolloutIndex: number, fields: Record<string, unknown> = {}) =>
  gymRow({
    input: [userMessage(instructionOf(SOLVABLE))],
    taskIndex: 0,
    rolloutIndex,
    fields: { instance_id: SOLVABLE, verifier_metadata: { fail_to_pass: 3, source: "bundled" }, ...fields },
  });

describe("requests Gym's models refuse are refused", () => {
  test("GET / answers 200 (Gym's liveness probe)", async () => {
    const res = await fetch(`${agent.url}/`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("ok");
  }, 30_000);

  const cases: [string, unknown, (string | number)[], string][] = [
    [
      "an unknown key inside responses_create_params",
      gymRow({ input: "x", params: { frequency_penalty: 0.5 }, fields: { instance_id: SOLVABLE } }),
      ["body", "responses_create_params", "frequency_penalty"],
      "extra_forbidden",
    ],
    ["responses_create_params missing", { instance_id: SOLVABLE, agent_ref: { name: "polar_agent" } }, ["body", "responses_create_params"], "missing"],
    ["input missing", { responses_create_params: { temperature: 1 }, instance_id: SOLVABLE }, ["body", "responses_create_params", "input"], "missing"],
    [
      "stream: true (Gym's params are non-streaming)",
      gymRow({ input: "x", params: { stream: true }, fields: { instance_id: SOLVABLE } }),
      ["body", "responses_create_params", "stream"],
      "literal_error",
    ],
    [
      "a non-integer _ng_task_index",
      { ...gymRow({ input: "x", fields: { instance_id: SOLVABLE } }), _ng_task_index: "zero" },
      ["body", "_ng_task_index"],
      "int_parsing",
    ],
    [
      "a malformed _ng_rollout_id",
      gymRow({ input: "x", fields: { instance_id: SOLVABLE, _ng_rollout_id: "../x" } }),
      ["body", "_ng_rollout_id"],
      "string_pattern_mismatch",
    ],
    ["no task named", gymRow({ input: "Fix the bug." }), ["body"], "missing"],
    ["a task id the node's task file does not have", gymRow({ input: "x", fields: { instance_id: "no-such-task" } }), ["body", "instance_id"], "value_error"],
    [
      "an inline task without an evaluator",
      gymRow({ input: "Say hi.", fields: { polar_task: { task_id: "hi", runtime: { prepare: [] } } } }),
      ["body", "polar_task", "evaluator"],
      "missing",
    ],
    [
      "an earlier assistant turn in the input",
      gymRow({ input: [userMessage("a"), { role: "assistant", content: "b" }], fields: { instance_id: SOLVABLE } }),
      ["body", "responses_create_params", "input", 1, "role"],
      "value_error",
    ],
    [
      "a function_call item in the input",
      gymRow({ input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }], fields: { instance_id: SOLVABLE } }),
      ["body", "responses_create_params", "input", 0, "type"],
      "value_error",
    ],
  ];
  for (const [name, body, loc, type] of cases) {
    test(`${name} → 422 naming the field`, async () => {
      const { status, json } = await run(body);
      expect(status).toBe(422);
      expect(json.detail[0]).toMatchObject({ loc, type });
      expect(typeof json.detail[0].msg).toBe("string");
    }, 30_000);
  }

  test("the unknown key is named", async () => {
    const { json } = await run(gymRow({ input: "x", params: { frequency_penalty: 0.5 }, fields: { instance_id: SOLVABLE } }));
    expect(json.detail[0].loc).toContain("frequency_penalty");
  }, 30_000);

  test("malformed JSON → 422 json_invalid", async () => {
    const { status, json } = await run("{nope");
    expect(status).toBe(422);
    expect(json.detail[0].type).toBe("json_invalid");
  }, 30_000);
});

describe("a bundled task, 4 rollouts as Gym sends them", () => {
  const results: any[] = [];
  const rows = [0, 1, 2, 3].map((i) => solvableRow(i));

  beforeAll(async () => {
    const answers = await Promise.all(rows.map((row) => run(row)));
    for (const a of answers) {
      expect(a.status).toBe(200);
      results.push(a.json);
    }
  }, 400_000);

  test("NeMo RL accepts every answer; both a solved (1.0) and an unsolved (0.0) rollout, each reward the evaluation's", () => {
    const rewards = new Set<number>();
    results.forEach((result, i) => {
      const parsed = GymRunResult.parse(result);
      const sample = consumeAsNemoRl(rows[i]!, result);
      expect(sample.mask_sample).toBe(false);
      expect(sample.message_log.length).toBeGreaterThanOrEqual(4);
      rewards.add(sample.reward);
      const evaluation = parsed.polar_rollout.evaluation as { status: string; strategy: string };
      expect(evaluation.strategy).toBe("swe");
      expect(parsed.reward).toBe(evaluation.status === "resolved" ? 1 : 0);
      expect(parsed.polar_rollout.reward_given).toBe(true);
      expect(parsed.failure_kind).toBeNull();
      expect(parsed.failure_reason).toBeNull();
      expect(parsed.instance_config.mask_sample).toBe(false);
      expect(parsed._ng_failure_class).toBeUndefined();
      expect(parsed.response.status).toBe("completed");
    });
    expect([...rewards].sort()).toEqual([0, 1]);
  });

  test("the row is echoed: Gym's keys, NeMo RL's _rowidx and the dataset's task fields", () => {
    results.forEach((result, i) => {
      const row = rows[i]!;
      for (const key of ["responses_create_params", "agent_ref", "_ng_task_index", "_ng_rollout_index", "_rowidx", "instance_id", "verifier_metadata"]) {
        expect(result[key]).toEqual(row[key]);
      }
      expect(result.polar_rollout.gym_rollout_id).toBe(`0-${i}`);
      expect(result.polar_rollout.task_id).toBe(SOLVABLE);
    });
  });

  test("the response: every item typed, tool calls answered by function_call_output items, one bundle per model call with the engine's sampled ids", async () => {
    const polar = httpPolarRollouts(agent.node.url, ADMIN_TOKEN);
    for (const result of results) {
      const r = GymRunResult.parse(result);
      const calls = await polar.calls(r.polar_rollout.gateway_session_id!);
      expect(r.response.object).toBe("response");
      expect(r.response.output.every((item) => typeof item.type === "string")).toBe(true);
      const callIds = r.response.output.flatMap((item) => (item.type === "function_call" ? [item.call_id] : []));
      const outputs = r.response.output.flatMap((item) => (item.type === "function_call_output" ? [item.call_id] : []));
      expect(callIds.length).toBeGreaterThan(0);
      // Every tool call but possibly the last was answered, and each answer names a call before it.
      for (const id of outputs) expect(callIds).toContain(id);
      expect(outputs.length).toBeGreaterThanOrEqual(callIds.length - 1);
      const bundled = r.response.output.filter((item) => "generation_token_ids" in item && item.generation_token_ids);
      expect(bundled.length).toBe(calls.length);
      bundled.forEach((item, k) => {
        expect((item as { generation_token_ids: number[] }).generation_token_ids).toEqual(calls[k]!.output_ids!);
        expect((item as { generation_log_probs: number[] }).generation_log_probs).toEqual(calls[k]!.logprobs!);
      });
      expect(r.response.usage.total_tokens).toBe(calls.reduce((n, c) => n + c.response!.usage.prompt_tokens + c.response!.usage.completion_tokens, 0));
      expect(r.response.tools.map((t) => t.name)).toContain("bash");
      // mini drops its reasoning from history: template-aware keeps one line, with drift it reports.
      expect(r.polar_rollout.trajectory!.trained_calls.length).toBe(calls.length);
      expect(r.polar_rollout.trajectory!.context_drift_tokens).toBeGreaterThan(0);
      expect(r.polar_rollout.timing.e2e_ms).toBeGreaterThan(0);
    }
  }, 60_000);

  test("/aggregate_metrics on the rows as Gym strips them: mean reward, pass rate per task, failure counts", async () => {
    const res = await fetch(`${agent.url}/aggregate_metrics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ verify_responses: results.map(strippedForAggregation) }),
    });
    expect(res.status).toBe(200);
    const metrics = GymAggregateMetrics.parse(await res.json());
    const rewards = results.map((r) => r.reward as number);
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    expect(metrics.agent_metrics["mean/reward"]).toBeCloseTo(mean, 12);
    expect(metrics.key_metrics["mean/reward"]).toBeCloseTo(mean, 12);
    expect(metrics.agent_metrics.num_rollouts).toBe(4);
    expect(metrics.agent_metrics.num_masked).toBe(0);
    expect(metrics.group_level_metrics).toHaveLength(1);
    expect(metrics.group_level_metrics[0]).toMatchObject({ _ng_task_index: 0, num_rollouts: 4, pass_rate: rewards.filter((r) => r === 1).length / 4 });
    expect(metrics.agent_metrics["pass@k"]).toBe(1);
  }, 30_000);
});

describe("outcomes that are not a plain reward", () => {
  const slowTask = (agentTimeout: number) => ({
    polar_task: {
      task_id: "slow-build",
      instruction: "Wait for the build to finish.",
      runtime: { prepare: [] },
      evaluator: { strategy: "session_completed" },
      metadata: { agent_timeout: agentTimeout },
    },
  });

  test("agent timeout: 200, failure_kind agent_timeout, trainable (mask_sample false) with reward 0, the calls before it bundled", async () => {
    const row = gymRow({ input: [userMessage("Wait for the build to finish.")], taskIndex: 1, fields: slowTask(3) });
    const { status, json } = await run(row);
    expect(status).toBe(200);
    const r = GymRunResult.parse(json);
    expect(r.failure_kind).toBe("agent_timeout");
    expect(r.failure_reason).toContain("agent timeout of 3 s");
    expect(r.mask_sample).toBe(false);
    expect(r.instance_config.mask_sample).toBe(false);
    expect(r.reward).toBe(0);
    expect(r.response.status).toBe("incomplete");
    expect(r._ng_failure_class).toBeUndefined();
    expect(r.polar_rollout.agent?.timed_out).toBe(true);
    const sample = consumeAsNemoRl(row, json);
    expect(sample.message_log.length).toBe(2);
  }, 180_000);

  test("agent timeout with mask_agent_timeout: the same outcome, masked", async () => {
    const row = gymRow({ input: [userMessage("Wait for the build to finish.")], taskIndex: 1, rolloutIndex: 1, fields: slowTask(3) });
    const { status, json } = await run(row, variant({ mask_agent_timeout: true }));
    expect(status).toBe(200);
    expect(json.failure_kind).toBe("agent_timeout");
    expect(json.mask_sample).toBe(true);
    expect(consumeAsNemoRl(row, json).mask_sample).toBe(true);
  }, 180_000);

  const brokenTask = {
    polar_task: {
      task_id: "broken-setup",
      instruction: "Fix it.",
      runtime: { prepare: [{ type: "exec", command: "echo setup failed >&2; exit 7", max_attempts: 1 }] },
      evaluator: { strategy: "session_completed" },
    },
  };

  test("infrastructure failure (the task's setup fails): masked, failure_kind polar:prepare with the reason, filed apart by Gym's collector", async () => {
    const row = gymRow({ input: [userMessage("Fix it.")], taskIndex: 2, fields: brokenTask });
    const { status, json } = await run(row);
    expect(status).toBe(200);
    const r = GymRunResult.parse(json);
    expect(r.failure_kind).toBe("polar:prepare");
    expect(r.failure_reason).toContain("7");
    expect(r.mask_sample).toBe(true);
    expect(r.instance_config.mask_sample).toBe(true);
    expect(r._ng_failure_class).toBe("polar:prepare");
    expect(r.reward).toBe(0);
    expect(r.polar_rollout.status).toBe("ERROR");
    expect(r.polar_rollout.failure?.cause).toBe("prepare");
    expect(r.response.status).toBe("failed");
    expect(r.response.error?.code).toBe("server_error");
    expect(r.response.output).toEqual([]);
    // No model call ran: NeMo RL's reader has nothing to train on (docs/gym.md: untrainable_status).
    expect(() => consumeAsNemoRl(row, json)).toThrow(NemoRlRejected);
  }, 120_000);

  test("untrainable_status 503: the same failure answers 503 (NeMo RL retries it as an infrastructure failure)", async () => {
    const row = gymRow({ input: [userMessage("Fix it.")], taskIndex: 2, rolloutIndex: 1, fields: brokenTask });
    const { status, json } = await run(row, variant({ untrainable_status: 503 }));
    expect(status).toBe(503);
    expect(json.failure_kind).toBe("polar:prepare");
    expect(json.mask_sample).toBe(true);
  }, 120_000);
});

test("a Gym client that goes away cancels its rollout", async () => {
  const row = gymRow({
    input: [userMessage("Wait for the build to finish.")],
    taskIndex: 3,
    fields: {
      polar_task: {
        task_id: "slow-build",
        instruction: "Wait for the build to finish.",
        runtime: { prepare: [] },
        evaluator: { strategy: "session_completed" },
        metadata: { agent_timeout: 120 },
      },
    },
  });
  const gone = new AbortController();
  const answer = fetch(`${agent.url}/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(row),
    signal: gone.signal,
  }).catch(() => "gone");
  // Wait until the rollout is live on the node (its row is held), then hang up.
  for (let i = 0; agent.catalog.held === 0; i++) {
    if (i > 600) throw new Error("the rollout never started");
    await Bun.sleep(50);
  }
  const [runTaskId] = agent.catalog.heldIds();
  gone.abort();
  expect(await answer).toBe("gone");
  const taskStatus = async () =>
    ((await (await fetch(`${agent.node.url}/rollout/task/${runTaskId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { status: string })
      .status;
  for (let i = 0; (await taskStatus()) !== "cancelled"; i++) {
    if (i > 600) throw new Error("the rollout was not cancelled");
    await Bun.sleep(100);
  }
  for (let i = 0; agent.catalog.held > 0; i++) {
    if (i > 600) throw new Error("the run's row was not released");
    await Bun.sleep(50);
  }
}, 120_000);

describe("a live session whose calls are not one exact token sequence", () => {
  test("max_context_drift 0: mini's dropped reasoning breaks every prompt; the last call is the main line, the others carried without a bundle, every bundle the engine's exact prompt", async () => {
    const row = solvableRow(4);
    const { status, json } = await run(row, variant({ max_context_drift: 0 }));
    expect(status).toBe(200);
    const r = GymRunResult.parse(json);
    const trajectory = r.polar_rollout.trajectory!;
    expect(trajectory.call_count).toBeGreaterThan(1);
    expect(trajectory.trace_count).toBe(trajectory.call_count);
    expect(trajectory.trained_calls).toEqual([trajectory.call_count - 1]);
    expect(trajectory.untrained_calls.map((u) => u.reason)).toEqual(Array(trajectory.call_count - 1).fill("off_main_line"));
    expect(trajectory.splits.map((s) => s.cause)).toContain("thinking-strip");
    expect(trajectory.context_drift_tokens).toBe(0);
    const sample = consumeAsNemoRl(row, json);
    expect(sample.message_log).toHaveLength(2);
    const calls = await httpPolarRollouts(agent.node.url, ADMIN_TOKEN).calls(r.polar_rollout.gateway_session_id!);
    const bundled = r.response.output.find((item) => "prompt_token_ids" in item && item.prompt_token_ids) as { prompt_token_ids: number[] };
    expect(bundled.prompt_token_ids).toEqual(calls.at(-1)!.prompt_ids!);
    // The carried calls are still in the response, as text.
    expect(r.response.output.filter((item) => item.type === "function_call").length).toBeGreaterThanOrEqual(trajectory.call_count - 1);
  }, 180_000);
});
