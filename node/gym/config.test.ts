import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { engineBaseUrl, settingsFromBlock, settingsFromFile, settingsFromGymEnvironment } from "./config.ts";

const EXAMPLE = resolve(import.meta.dir, "../../integrations/nemo_gym/configs/polar.yaml");

/** A global config as OmegaConf.to_yaml writes it for Gym's child servers (interpolations unresolved). */
const GLOBAL_YAML = `
policy_base_url:
- http://10.0.0.5:8000/v1
- http://10.0.0.6:8000/v1/
policy_api_key: dummy_key
policy_model_name: Qwen/Qwen3-4B
policy_model:
  responses_api_models:
    vllm_model:
      entrypoint: app.py
      base_url: \${policy_base_url}
      model: \${policy_model_name}
polar_agent:
  responses_api_agents:
    polar_agent:
      entrypoint: app.py
      host: 10.0.0.5
      port: 12345
      harness: qwen-code
      harness_settings:
        max_turns: 40
      model_server:
        type: responses_api_models
        name: policy_model
      node:
        runtime: docker
        workers:
          run: 16
      datasets:
      - name: train
        type: train
        jsonl_fpath: data/train.jsonl
        license: MIT
`;

describe("settings from Gym's environment", () => {
  test("the block's keys, its node settings, and the engine from the model_server's interpolated base_url (no /v1)", () => {
    const s = settingsFromGymEnvironment({ NEMO_GYM_CONFIG_DICT: GLOBAL_YAML, NEMO_GYM_CONFIG_PATH: "polar_agent" });
    expect(s.agent).toMatchObject({ host: "10.0.0.5", port: 12345, harness: "qwen-code", harness_settings: { max_turns: 40 }, model: "Qwen/Qwen3-4B" });
    expect(s.agent.trajectory_strategy).toBe("template-aware");
    expect(s.node).toEqual({
      runtime: "docker",
      workers: { run: 16 },
      engine: { urls: ["http://10.0.0.5:8000", "http://10.0.0.6:8000"], model: "Qwen/Qwen3-4B" },
    });
  });

  test("without model_server: the top-level policy_base_url and policy_model_name", () => {
    const yaml = GLOBAL_YAML.replace(/      model_server:\n        type: responses_api_models\n        name: policy_model\n/, "");
    const s = settingsFromGymEnvironment({ NEMO_GYM_CONFIG_DICT: yaml, NEMO_GYM_CONFIG_PATH: "polar_agent" });
    expect(s.node.engine).toEqual({ urls: ["http://10.0.0.5:8000", "http://10.0.0.6:8000"], model: "Qwen/Qwen3-4B" });
  });

  test("flag overrides win over the block", () => {
    const s = settingsFromGymEnvironment(
      { NEMO_GYM_CONFIG_DICT: GLOBAL_YAML, NEMO_GYM_CONFIG_PATH: "polar_agent" },
      { port: 1, node: { engine: { urls: ["http://127.0.0.1:9000"] } } },
    );
    expect(s.agent.port).toBe(1);
    expect((s.node.engine as { urls: string[] }).urls).toEqual(["http://127.0.0.1:9000"]);
  });

  const refusals: [string, Record<string, string | undefined>, string][] = [
    ["no NEMO_GYM_CONFIG_DICT", { NEMO_GYM_CONFIG_PATH: "polar_agent" }, "NEMO_GYM_CONFIG_DICT is not set"],
    ["no NEMO_GYM_CONFIG_PATH", { NEMO_GYM_CONFIG_DICT: GLOBAL_YAML }, "NEMO_GYM_CONFIG_PATH is not set"],
    ["a block name that is not there", { NEMO_GYM_CONFIG_DICT: GLOBAL_YAML, NEMO_GYM_CONFIG_PATH: "other" }, "no agent block at other"],
    ["YAML that does not parse", { NEMO_GYM_CONFIG_DICT: "a: [1,\n", NEMO_GYM_CONFIG_PATH: "polar_agent" }, "not valid YAML"],
    [
      "a typo in a Polar setting",
      { NEMO_GYM_CONFIG_DICT: GLOBAL_YAML.replace("harness: qwen-code", "harnes: qwen-code"), NEMO_GYM_CONFIG_PATH: "polar_agent" },
      "harnes",
    ],
    [
      "no policy endpoint",
      {
        NEMO_GYM_CONFIG_DICT: GLOBAL_YAML.replace(/policy_base_url:\n- .*\n- .*\n/, "").replace(/      base_url: .*\n/, ""),
        NEMO_GYM_CONFIG_PATH: "polar_agent",
      },
      "no policy endpoint",
    ],
    [
      "an unknown harness",
      { NEMO_GYM_CONFIG_DICT: GLOBAL_YAML.replace("harness: qwen-code", "harness: copilot"), NEMO_GYM_CONFIG_PATH: "polar_agent" },
      "harness",
    ],
  ];
  for (const [name, env, message] of refusals) {
    test(`refused: ${name}`, () => {
      let error: unknown;
      try {
        settingsFromGymEnvironment(env);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(PolarError);
      expect((error as PolarError).message).toContain(message);
    });
  }

  test("no model name anywhere is refused", () => {
    expect(() => settingsFromBlock({ harness: "mini" }, {}, "test")).toThrow(/model/);
  });
});

test("the example configs/polar.yaml is a valid agent block", () => {
  const example = Bun.YAML.parse(readFileSync(EXAMPLE, "utf8")) as Record<string, any>;
  const s = settingsFromBlock(
    example.polar_agent.responses_api_agents.polar_agent,
    { policy_base_url: "http://127.0.0.1:8000/v1", policy_model_name: "m" },
    EXAMPLE,
  );
  expect(s.agent.harness).toBe("mini");
  expect(s.node).toMatchObject({ runtime: "docker", engine: { urls: ["http://127.0.0.1:8000"], model: "m" } });
  for (const d of example.polar_agent.responses_api_agents.polar_agent.datasets)
    expect(Object.keys(d).sort()).toEqual(["jsonl_fpath", "license", "name", "type"]);
});

test("engine base URLs lose a trailing /v1 and slashes", () => {
  expect(engineBaseUrl("http://h:1/v1")).toBe("http://h:1");
  expect(engineBaseUrl("http://h:1/v1/")).toBe("http://h:1");
  expect(engineBaseUrl("http://h:1")).toBe("http://h:1");
});

test("settings from a file holding one agent block and the policy keys (YAML, JSON)", () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-gym-config-"));
  const yaml = join(dir, "agent.yaml");
  writeFileSync(yaml, "policy_base_url: http://127.0.0.1:8000/v1\npolicy_model_name: m\nharness: pi\nnode:\n  runtime: process\n");
  expect(settingsFromFile(yaml, { port: 9 })).toMatchObject({
    agent: { harness: "pi", model: "m", port: 9 },
    node: { runtime: "process", engine: { urls: ["http://127.0.0.1:8000"], model: "m" } },
  });
  const json = join(dir, "agent.json");
  writeFileSync(json, JSON.stringify({ model: "x", harness: "codex" }));
  expect(settingsFromFile(json).agent).toMatchObject({ model: "x", harness: "codex" });
  expect(() => settingsFromFile(join(dir, "missing.yaml"))).toThrow(/cannot be read/);
});
