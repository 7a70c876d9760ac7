// integrations/nemo_gym/app.py started as Gym starts an agent server: `python app.py` in the
// server's folder, with the global config as YAML in NEMO_GYM_CONFIG_DICT (written unresolved, as
// OmegaConf.to_yaml writes it: `${policy_base_url}` interpolations stay) and the block's name in
// NEMO_GYM_CONFIG_PATH. The block is configs/polar.yaml with test settings over it; the policy is
// the mock engine, reached through a `model_server` reference as NeMo RL's configs do. It must
// answer Gym's liveness probe and one /run that NeMo RL accepts, and stop on SIGTERM.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { GymRunResult } from "../protocol/gym.ts";
import { BUNDLED_TASKS_FILE } from "../node/api/task-catalog.ts";
import { startMockEngine, type RunningMockEngine } from "../node/mock-engine/index.ts";
import { mergeLayers } from "../node/node-config.ts";
import { consumeAsNemoRl } from "./helpers/nemo-rl-consumer.ts";

const APP_DIR = resolve(import.meta.dir, "../integrations/nemo_gym");
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : (Bun.which("python3") ?? "python3");
const SERVER_NAME = "polar_agent";

/** The parent's PATH without any folder holding a `polar` (app.py must find this checkout's), plus bun's. */
function pathWithoutPolar(): string {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((d) => d !== "" && !existsSync(join(d, "polar")));
  return [dirname(process.execPath), ...dirs].join(delimiter);
}

function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("NEMO_GYM_") && k !== "POLAR_BIN" && !k.startsWith("POLAR_")) env[k] = v;
  return { ...env, PATH: pathWithoutPolar(), ...extra };
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

let engine: RunningMockEngine;
beforeAll(async () => {
  engine = await startMockEngine({ port: 0, tasks: BUNDLED_TASKS_FILE, successProbability: 0.5 });
}, 120_000);
afterAll(async () => {
  await engine?.stop();
});

test("without Gym's variables app.py exits non-zero naming them", async () => {
  const proc = Bun.spawn([PYTHON, "app.py"], { cwd: APP_DIR, env: childEnv({}), stdout: "pipe", stderr: "pipe" });
  expect(await proc.exited).not.toBe(0);
  const stderr = await new Response(proc.stderr).text();
  expect(stderr).toContain("NEMO_GYM_CONFIG_DICT");
  expect(stderr).toContain("NEMO_GYM_CONFIG_PATH");
}, 30_000);

test("Gym-style start: GET / answers, one /run returns the evaluation's reward and token bundles NeMo RL accepts, SIGTERM stops it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-gym-app-"));
  const port = await freePort();
  const example = Bun.YAML.parse(readFileSync(join(APP_DIR, "configs/polar.yaml"), "utf8")) as Record<string, any>;
  const block = mergeLayers(example[SERVER_NAME].responses_api_agents[SERVER_NAME], {
    host: "127.0.0.1",
    port,
    model_server: { type: "responses_api_models", name: "policy_model" },
    node: {
      runtime: "process",
      db: join(dir, "node.db"),
      node_id: `gym-app-${process.pid}`,
      admin_token: "gym-app-admin-token-0123456789",
      workers: { init: 1, run: 1, postrun: 1, ready_backlog: 1 },
      sampling: { max_tokens_cap: 4096 },
    },
  });
  // The global config as Gym passes it to every server it starts.
  const global = {
    config_paths: ["responses_api_agents/polar_agent/configs/polar.yaml"],
    head_server: { host: "127.0.0.1", port: 11000 },
    policy_base_url: [`${engine.url}/v1`],
    policy_api_key: "dummy_key",
    policy_model_name: "Qwen/Qwen3-8B",
    policy_model: {
      responses_api_models: {
        vllm_model: {
          entrypoint: "app.py",
          base_url: "${policy_base_url}",
          api_key: "${policy_api_key}",
          model: "${policy_model_name}",
          return_token_id_information: true,
        },
      },
    },
    [SERVER_NAME]: { responses_api_agents: { [SERVER_NAME]: block } },
  };
  const proc = Bun.spawn([PYTHON, "app.py"], {
    cwd: APP_DIR,
    env: childEnv({ NEMO_GYM_CONFIG_DICT: Bun.YAML.stringify(global, null, 2), NEMO_GYM_CONFIG_PATH: SERVER_NAME }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderrText = new Response(proc.stderr).text();
  const base = `http://127.0.0.1:${port}`;
  try {
    // Gym's readiness probe: any answer at / (it polls until the server is up).
    const t0 = Date.now();
    let alive: Response | undefined;
    while (!alive) {
      alive = await fetch(`${base}/`).catch(() => undefined);
      if (!alive) {
        if (proc.exitCode !== null) throw new Error(`app.py exited with ${proc.exitCode}: ${await stderrText}`);
        if (Date.now() - t0 > 90_000) throw new Error("the agent server did not come up in 90 s");
        await Bun.sleep(250);
      }
    }
    expect(alive.status).toBe(200);

    const row = JSON.parse(readFileSync(join(APP_DIR, "data/example.jsonl"), "utf8").split("\n")[0]!) as Record<string, any>;
    const sent = { ...row, _ng_task_index: 0, _ng_rollout_index: 0 };
    const res = await fetch(`${base}/run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(sent) });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Record<string, any>;
    const r = GymRunResult.parse(json);
    expect(r.polar_rollout.task_id).toBe(row.instance_id);
    expect(r.polar_rollout.harness).toBe("mini");
    expect(r.polar_rollout.model).toBe("Qwen/Qwen3-8B");
    expect(r.polar_rollout.reward_given).toBe(true);
    expect(r.reward).toBe((r.polar_rollout.evaluation as { status: string }).status === "resolved" ? 1 : 0);
    const sample = consumeAsNemoRl(sent, json);
    expect(sample.message_log.length).toBe(2 * r.polar_rollout.trajectory!.trained_calls.length);
    expect(sample.message_log.length).toBeGreaterThanOrEqual(4);
  } finally {
    proc.kill("SIGTERM");
    const code = await Promise.race([proc.exited, Bun.sleep(30_000).then(() => "still running")]);
    if (code === "still running") proc.kill("SIGKILL");
    expect(code).toBe(0);
  }
}, 240_000);

test("`polar gym rows` writes the task file as a Gym dataset; a bad setting is a usage error", async () => {
  const polar = resolve(import.meta.dir, "../bin/polar.ts");
  const rows = Bun.spawnSync([process.execPath, polar, "gym", "rows", "--only", "js-leap-year-century", "--agent", "my_agent"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(rows.exitCode).toBe(0);
  const lines = rows.stdout
    .toString()
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, any>);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ instance_id: "js-leap-year-century", agent_ref: { name: "my_agent", type: "responses_api_agents" } });
  expect(lines[0]!.responses_create_params.input[0].role).toBe("user");
  const bad = Bun.spawnSync([process.execPath, polar, "gym", "--harness", "copilot", "--model", "m"], { stdout: "pipe", stderr: "pipe" });
  expect(bad.exitCode).toBe(2);
  expect(bad.stderr.toString()).toContain("harness");
}, 60_000);
