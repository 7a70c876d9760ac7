import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envLayer, mergeLayers, parseNodeConfig, readConfigFile } from "./node-config.ts";

const token = "t".repeat(20);
const rollout = "r".repeat(20);

test("TOML and JSON files, then environment, then flags; defaults filled", () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-cfg-"));
  writeFileSync(join(dir, "node.toml"), `port = 9001\nruntime = "docker"\n[workers]\nrun = 16\n[engine]\nurls = ["http://127.0.0.1:8001"]\n`);
  writeFileSync(join(dir, "node.json"), JSON.stringify({ port: 9002 }));
  const config = parseNodeConfig(
    mergeLayers(readConfigFile(join(dir, "node.toml")), envLayer({ POLAR_ADMIN_TOKEN: token, POLAR_ROLLOUT_TOKEN: rollout }), { workers: { init: 2 } }),
  );
  expect(config).toMatchObject({
    port: 9001,
    runtime: "docker",
    admin_token: token,
    rollout_token: rollout,
    open_rollout_api: false,
    workers: { run: 16, init: 2, postrun: 4 },
    engine: { backend: "vllm", urls: ["http://127.0.0.1:8001"] },
  });
  expect(readConfigFile(join(dir, "node.json")).port).toBe(9002);
});

test("errors name the key", () => {
  expect(() => parseNodeConfig({ admin_token: token, workers: { run: 0 } })).toThrow(/workers\.run:/);
  expect(() => parseNodeConfig({ admin_token: "short" })).toThrow(/admin_token: must be at least 16/);
  expect(() => parseNodeConfig({ admin_token: token, engine: { urls: ["x"], colour: 1 } })).toThrow(/engine\.colour: unknown setting/);
  expect(() => parseNodeConfig({ admin_token: token, runtime: "vm" })).toThrow(/runtime:/);
});

test("sandbox: nothing beyond the sandbox is granted by default; limits have defaults; bad values name the key", () => {
  const config = parseNodeConfig({ admin_token: token, rollout_token: rollout });
  expect(config.sandbox).toEqual({ allow_host_network: false, allow_cap_add: [], pids_limit: 512, disk_mb: 1024 });
  expect(config.sandbox.host_path_roots).toBeUndefined();
  const granted = parseNodeConfig(
    mergeLayers(
      { admin_token: token, rollout_token: rollout },
      { sandbox: { allow_host_network: true, allow_cap_add: ["NET_BIND_SERVICE"], host_path_roots: ["/data/tasks"], disk_mb: 4096 } },
    ),
  );
  expect(granted.sandbox).toEqual({
    allow_host_network: true,
    allow_cap_add: ["NET_BIND_SERVICE"],
    host_path_roots: ["/data/tasks"],
    pids_limit: 512,
    disk_mb: 4096,
  });
  expect(() => parseNodeConfig({ admin_token: token, sandbox: { pids_limit: 0 } })).toThrow(/sandbox\.pids_limit:/);
  expect(() => parseNodeConfig({ admin_token: token, sandbox: { allow_cap_add: ["NET BIND"] } })).toThrow(/sandbox\.allow_cap_add\.0:/);
  expect(() => parseNodeConfig({ admin_token: token, sandbox: { allow_network: true } })).toThrow(/sandbox\.allow_network: unknown setting/);
});

test("the rollout API needs its token, or an explicit open on a loopback host", () => {
  expect(() => parseNodeConfig({ admin_token: token })).toThrow(/rollout_token: required/);
  expect(() => parseNodeConfig({ admin_token: token, rollout_token: token })).toThrow(/rollout_token: must differ from admin_token/);
  expect(() => parseNodeConfig({ admin_token: token, rollout_token: rollout, coordinator: { url: "http://127.0.0.1:1", token: rollout } })).toThrow(
    /rollout_token: must differ from the node token/,
  );
  expect(() => parseNodeConfig({ admin_token: token, open_rollout_api: true, host: "0.0.0.0" })).toThrow(
    /open_rollout_api: an open rollout API needs a loopback host, not 0\.0\.0\.0/,
  );
  for (const host of ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
    expect(parseNodeConfig({ admin_token: token, open_rollout_api: true, host }).open_rollout_api).toBe(true);
  expect(parseNodeConfig({ admin_token: token, rollout_token: rollout, host: "0.0.0.0" }).metrics_require_admin_token).toBe(false);
});
