// `polar gym` running REAL harness CLIs in the node's sandboxes against the mock engine: Pi
// solving a bundled task (reward from the evaluation in a fresh sandbox), and Codex compacting
// its context mid-rollout (a session that is not one token sequence) — each answer read with NeMo
// RL's reader. CLIs not installed (scripts/install-harnesses.sh) are skipped with a named reason,
// unless POLAR_REQUIRE_HARNESSES=1, where a missing CLI fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { GymRunResult } from "../protocol/gym.ts";
import { BUNDLED_TASKS_FILE, loadTaskCatalog } from "../node/api/task-catalog.ts";
import { settingsFromBlock, type GymAgentConfig } from "../node/gym/config.ts";
import { httpPolarRollouts } from "../node/gym/polar-client.ts";
import { gymRoutes } from "../node/gym/routes.ts";
import { GYM_BODY_LIMITS, startGymAgent, type RunningGymAgent } from "../node/gym/server.ts";
import { pinnedBinary, type PinnedCli } from "../node/harness/common.ts";
import { startMockEngine, type RunningMockEngine } from "../node/mock-engine/index.ts";
import { gymRow, userMessage } from "./helpers/gym-rows.ts";
import { consumeAsNemoRl } from "./helpers/nemo-rl-consumer.ts";
import { compactionScript, COMPACTION_RECIPES } from "./helpers/real-cli-scenarios.ts";

const ADMIN_TOKEN = "gym-cli-admin-token-0123456789";
const REQUIRE_ALL = process.env.POLAR_REQUIRE_HARNESSES === "1";
const installed = (cli: PinnedCli) => existsSync(pinnedBinary(cli));
const catalog = await loadTaskCatalog(BUNDLED_TASKS_FILE);

let engine: RunningMockEngine;
let agent: RunningGymAgent;

beforeAll(async () => {
  // Bundled tasks' prompts get the solving policy; any other prompt the compaction script (a
  // ~14K-token tool output once, so Codex with a 10,000-token window compacts).
  engine = await startMockEngine({ port: 0, tasks: BUNDLED_TASKS_FILE, successProbability: 0.5, script: compactionScript(6, undefined) });
  const dir = mkdtempSync(join(tmpdir(), "polar-gym-cli-"));
  agent = await startGymAgent(
    settingsFromBlock(
      {
        harness: "pi",
        agent_timeout_seconds: 300,
        node: {
          admin_token: ADMIN_TOKEN,
          db: join(dir, "node.db"),
          node_id: `gym-cli-${process.pid}`,
          runtime: "process",
          workers: { init: 2, run: 2, postrun: 2, ready_backlog: 1 },
          sampling: { max_tokens_cap: 4096 },
        },
      },
      { policy_base_url: engine.url, policy_model_name: "Qwen/Qwen3-8B" },
      "test",
    ),
  );
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await engine?.stop();
}, 60_000);

function agentWith(overrides: Partial<GymAgentConfig>): Hono {
  return gymRoutes({
    config: { ...agent.settings.agent, ...overrides },
    polar: httpPolarRollouts(agent.node.url, ADMIN_TOKEN),
    catalog: agent.catalog,
    nodeId: agent.node.config.node_id,
    bodyLimits: GYM_BODY_LIMITS,
  });
}

async function run(app: Hono | null, body: unknown): Promise<{ status: number; json: any }> {
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const res = app ? await app.fetch(new Request("http://gym/run", init)) : await fetch(`${agent.url}/run`, init);
  return { status: res.status, json: await res.json() };
}

function cliTest(cli: PinnedCli, name: string, fn: () => Promise<void>, timeoutMs: number): void {
  if (!installed(cli) && !REQUIRE_ALL) {
    test.skip(`${name} [SKIPPED: ${cli} not installed — run scripts/install-harnesses.sh]`, () => {});
    return;
  }
  test(
    name,
    async () => {
      expect(installed(cli) ? "installed" : `${cli} is not installed at ${pinnedBinary(cli)}`).toBe("installed");
      await fn();
    },
    timeoutMs,
  );
}

describe("real CLIs behind the Gym agent server", () => {
  cliTest(
    "pi",
    "pi solves or fails a bundled task: the evaluation's reward, one bundle per call, NeMo RL accepts both rollouts",
    async () => {
      const taskId = "js-get-path-falsy-values";
      const rows = [0, 1].map((i) => gymRow({ input: [userMessage(catalog.get(taskId)!.instruction)], rolloutIndex: i, fields: { instance_id: taskId } }));
      const answers = await Promise.all(rows.map((row) => run(null, row)));
      answers.forEach(({ status, json }, i) => {
        expect(status).toBe(200);
        const r = GymRunResult.parse(json);
        expect(r.polar_rollout.harness).toBe("pi");
        expect(r.polar_rollout.status).toBe("COMPLETED");
        const evaluation = r.polar_rollout.evaluation as { status: string; strategy: string };
        expect(evaluation.strategy).toBe("swe");
        expect(r.reward).toBe(evaluation.status === "resolved" ? 1 : 0);
        expect(r.mask_sample).toBe(false);
        const sample = consumeAsNemoRl(rows[i]!, json);
        expect(sample.message_log.length).toBe(2 * r.polar_rollout.trajectory!.trained_calls.length);
        expect(r.polar_rollout.trajectory!.trained_calls.length).toBeGreaterThanOrEqual(3);
        expect(r.response.output.some((item) => item.type === "function_call_output")).toBe(true);
      });
    },
    600_000,
  );

  const codex = COMPACTION_RECIPES.find((r) => r.cli === "codex")!;
  cliTest(
    "codex",
    "codex compacts its context mid-rollout: the calls after the compaction are the main line, the earlier ones carried without a bundle, NeMo RL accepts it",
    async () => {
      const instruction = "Run the scripted shell steps, then say Done.";
      const row = gymRow({
        input: [userMessage(instruction)],
        taskIndex: 5,
        fields: { polar_task: { task_id: "scripted-steps", instruction, runtime: { prepare: [] }, evaluator: { strategy: "session_completed" } } },
      });
      const { status, json } = await run(agentWith({ harness: "codex", harness_settings: { context_window: codex.options.contextWindow } }), row);
      expect(status).toBe(200);
      const r = GymRunResult.parse(json);
      expect(r.polar_rollout.status).toBe("COMPLETED");
      expect(r.reward).toBe(1);
      const trajectory = r.polar_rollout.trajectory!;
      const compaction = trajectory.splits.find((s) => s.cause === "compaction");
      expect(compaction).toBeDefined();
      expect(trajectory.trained_calls.every((seq) => seq >= compaction!.seq)).toBe(true);
      expect(trajectory.untrained_calls.some((u) => u.reason === "off_main_line" && u.seq < compaction!.seq)).toBe(true);
      const sample = consumeAsNemoRl(row, json);
      expect(sample.message_log.length).toBe(2 * trajectory.trained_calls.length);
      // The prompts of the calls before the compaction are not a prefix of the ones after it.
      const calls = await httpPolarRollouts(agent.node.url, ADMIN_TOKEN).calls(r.polar_rollout.gateway_session_id!);
      const before = calls.find((c) => c.seq === compaction!.seq - 1)!;
      const after = calls.find((c) => c.seq === compaction!.seq)!;
      const seen = [...before.prompt_ids!, ...before.output_ids!];
      expect(after.prompt_ids!.slice(0, seen.length)).not.toEqual(seen);
    },
    600_000,
  );
});
