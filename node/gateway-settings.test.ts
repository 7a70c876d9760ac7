// A node's config file sets every gateway and backend knob `polar gateway` has flags for, and
// those values reach the gateway the node runs (served model and retries checked against a failing engine).
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockEngine } from "./mock-engine/index.ts";
import { startNode } from "./main.ts";
import { BackendOptions } from "./gateway/backends/options.ts";
import { GatewayConfig } from "./gateway/config.ts";
import { nodeBackendOptions, nodeGatewayConfig } from "./gateway-settings.ts";
import { mergeLayers, parseNodeConfig, readConfigFile } from "./node-config.ts";

const token = "t".repeat(20);

const NODE_TOML = `
[engine]
backend = "sglang"
urls = ["http://127.0.0.1:8001"]
served_model = "served"
tokenizer = "/models/qwen"
timeout_ms = 1234
retries = 0
backoff_ms = 7
engine_down_ms = 99
max_sessions = 12
pass_reasoning = true
token_splice = true
tito_engine = "sglang"
sglang_mode = "generate"
sglang_router = true
[gateway]
cache_bytes = 1048576
stream_head_start_ms = 50
keep_alive_ms = 2000
max_body_bytes = 4096
max_json_depth = 16
[sampling]
max_tokens_cap = 256
temperature = 0.5
top_p = 0.9
thinking = false
`;

function configFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "polar-gw-settings-")), "node.toml");
  writeFileSync(path, text);
  return path;
}

test("a config file's engine, gateway and sampling keys become the backend's options and the gateway's config", () => {
  const config = parseNodeConfig(mergeLayers(readConfigFile(configFile(NODE_TOML)), { admin_token: token, open_rollout_api: true }));
  expect(BackendOptions.parse(nodeBackendOptions(config))).toEqual({
    urls: ["http://127.0.0.1:8001"],
    model: "served",
    tokenizer: "/models/qwen",
    timeoutMs: 1234,
    retries: 0,
    backoffMs: 7,
    engineDownMs: 99,
    maxSessions: 12,
    passReasoning: true,
    tokenSplice: true,
    titoEngine: "sglang",
    sglangMode: "generate",
    router: true,
  });
  expect(GatewayConfig.parse(nodeGatewayConfig(config))).toMatchObject({
    adminToken: token,
    tokenizer: "/models/qwen",
    cacheBytes: 1048576,
    streamHeadStartMs: 50,
    keepAliveMs: 2000,
    maxBodyBytes: 4096,
    maxJsonDepth: 16,
    maxTokensCap: 256,
    temperature: 0.5,
    topP: 0.9,
    thinking: false,
  });
});

test("settings left out take the gateway's and the backend's own defaults", () => {
  const config = parseNodeConfig({ admin_token: token, open_rollout_api: true });
  expect(BackendOptions.parse(nodeBackendOptions(config))).toEqual(BackendOptions.parse({ urls: config.engine.urls }));
  expect(GatewayConfig.parse(nodeGatewayConfig(config))).toEqual(
    GatewayConfig.parse({ adminToken: token, host: config.host, port: config.port, db: config.db }),
  );
});

test("bad values name the key", () => {
  expect(() => parseNodeConfig({ admin_token: token, open_rollout_api: true, engine: { retries: -1 } })).toThrow(/engine\.retries:/);
  expect(() => parseNodeConfig({ admin_token: token, open_rollout_api: true, engine: { sglang_mode: "native" } })).toThrow(/engine\.sglang_mode:/);
  expect(() => parseNodeConfig({ admin_token: token, open_rollout_api: true, gateway: { cache_mb: 1 } })).toThrow(/gateway\.cache_mb: unknown setting/);
});

/** One chat call through the node's gateway in a session made with the admin API; its HTTP status. */
async function oneCall(nodeUrl: string): Promise<number> {
  const created = await fetch(`${nodeUrl}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ metadata: {} }),
  });
  expect(created.status).toBe(201);
  const session = (await created.json()) as { token: string };
  const res = await fetch(`${nodeUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${session.token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 8 }),
  });
  await res.arrayBuffer();
  return res.status;
}

for (const retries of [0, 1]) {
  test(`engine.retries = ${retries} from the config file: the node's gateway ${retries ? "retries" : "does not retry"} an engine's 500`, async () => {
    const engine = await startMockEngine({ port: 0, failFirst: 1, model: "served-name" });
    const dir = mkdtempSync(join(tmpdir(), "polar-gw-settings-node-"));
    const file = configFile(`[engine]\nurls = ["${engine.url}"]\nserved_model = "served-name"\nretries = ${retries}\nbackoff_ms = 0\n`);
    const node = await startNode(
      parseNodeConfig(mergeLayers(readConfigFile(file), { admin_token: token, open_rollout_api: true, port: 0, db: join(dir, "node.db"), tasks: "" })),
    );
    try {
      const status = await oneCall(node.url);
      expect(status).toBe(retries ? 200 : 502);
      expect(engine.calls).toBe(retries ? 2 : 1);
    } finally {
      await node.stop();
      await engine.stop();
    }
  }, 30_000);
}
