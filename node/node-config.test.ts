import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envLayer, mergeLayers, parseNodeConfig, readConfigFile } from "./node-config.ts";

const token = "t".repeat(20);

test("TOML and JSON files, then environment, then flags; defaults filled", () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-cfg-"));
  writeFileSync(join(dir, "node.toml"), `port = 9001\nruntime = "docker"\n[workers]\nrun = 16\n[engine]\nurls = ["http://127.0.0.1:8001"]\n`);
  writeFileSync(join(dir, "node.json"), JSON.stringify({ port: 9002 }));
  const config = parseNodeConfig(mergeLayers(readConfigFile(join(dir, "node.toml")), envLayer({ POLAR_ADMIN_TOKEN: token }), { workers: { init: 2 } }));
  expect(config).toMatchObject({ port: 9001, runtime: "docker", admin_token: token, workers: { run: 16, init: 2, postrun: 4 }, engine: { backend: "vllm", urls: ["http://127.0.0.1:8001"] } });
  expect(readConfigFile(join(dir, "node.json")).port).toBe(9002);
});

test("errors name the key", () => {
  expect(() => parseNodeConfig({ admin_token: token, workers: { run: 0 } })).toThrow(/workers\.run:/);
  expect(() => parseNodeConfig({ admin_token: "short" })).toThrow(/admin_token: must be at least 16/);
  expect(() => parseNodeConfig({ admin_token: token, engine: { urls: ["x"], colour: 1 } })).toThrow(/engine\.colour: unknown setting/);
  expect(() => parseNodeConfig({ admin_token: token, runtime: "vm" })).toThrow(/runtime:/);
});
