// The sandbox runner with the `command` harness in a real bwrap sandbox: what the harness is
// given (bridge URL, private home, config files owner-only), `network: "host"` without a bridge,
// and a timeout that stops the bridge and the harness together.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBwrap } from "../runtime/process/bwrap.ts";
import { createProcessRuntime } from "../runtime/process/process.ts";
import { RuntimeSpec, type Sandbox } from "../runtime/types.ts";
import { PolarError } from "../../protocol/errors.ts";
import { getHarness } from "./registry.ts";
import { harnessMounts } from "./sandbox-mounts.ts";
import { DEFAULT_BRIDGE_PORT, SANDBOX_HOME_DIR, runInSandbox } from "./sandbox-runner.ts";
import type { HarnessAdapter } from "./types.ts";

const root = await mkdtemp(join(tmpdir(), "polar-sandbox-runner-"));
const runtime = createProcessRuntime({ root, warn: () => {} });
const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.destroy()));
  await rm(root, { recursive: true, force: true });
});

async function sandbox(network: "none" | "host" = "none"): Promise<Sandbox> {
  const created = await runtime.create({
    spec: RuntimeSpec.parse({ backend: "process", network }),
    labels: { node_id: "runner-test" },
    mounts: harnessMounts(),
  });
  sandboxes.push(created);
  return created;
}

const session = { token: "sess-token", openaiBaseUrl: "http://127.0.0.1:8300/v1", anthropicBaseUrl: "http://127.0.0.1:8300" };

/** The command harness plus one private config file, to see where files land. */
const withConfig: HarnessAdapter = {
  ...getHarness("command"),
  async prepare(spec) {
    const launch = await getHarness("command").prepare(spec);
    return { ...launch, files: { [`${spec.homeDir}/.tool/config.json`]: '{"ok":true}' } };
  },
};

const describeBwrap = findBwrap() || process.env.POLAR_REQUIRE_BWRAP === "1" ? describe : describe.skip;
describeBwrap("sandbox runner (process runtime)", () => {
  test("the harness gets the bridge URL, a private home and owner-only config", async () => {
    const script =
      'printf "%s\\n" "$OPENAI_BASE_URL" "$ANTHROPIC_BASE_URL" "$HOME" "$PWD"; stat -c %a "$HOME" "$HOME/.tool/config.json"; cat "$HOME/.tool/config.json"';
    const result = await runInSandbox({
      sandbox: await sandbox(),
      adapter: withConfig,
      session,
      model: "m",
      instruction: "go",
      limits: { timeoutMs: 60_000 },
      options: { argv: ["sh", "-c", script] },
    });
    expect(result.error).toBeUndefined();
    expect(result.bridged).toBe(true);
    expect(result.stdout.trim().split("\n")).toEqual([
      `http://127.0.0.1:${DEFAULT_BRIDGE_PORT}/v1`,
      `http://127.0.0.1:${DEFAULT_BRIDGE_PORT}`,
      SANDBOX_HOME_DIR,
      "/work",
      "700",
      "600",
      '{"ok":true}',
    ]);
  }, 60_000);

  test('network "host" skips the bridge and uses the gateway\'s TCP URLs', async () => {
    const result = await runInSandbox({
      sandbox: await sandbox("host"),
      adapter: getHarness("command"),
      session,
      model: "m",
      instruction: "go",
      limits: { timeoutMs: 60_000 },
      options: { argv: ["sh", "-c", 'echo "$OPENAI_BASE_URL"'] },
    });
    expect(result.bridged).toBe(false);
    expect(result.stdout.trim()).toBe(session.openaiBaseUrl);
  }, 60_000);

  test("a timeout stops the bridge and the harness", async () => {
    const started = performance.now();
    const result = await runInSandbox({
      sandbox: await sandbox(),
      adapter: getHarness("command"),
      session,
      model: "m",
      instruction: "go",
      limits: { timeoutMs: 1500 },
      options: { argv: ["sh", "-c", "sleep 300 & sleep 300"] },
    });
    expect(result.timedOut).toBe(true);
    expect(result.error).toBe("harness timed out");
    expect(performance.now() - started).toBeLessThan(60_000);
  }, 90_000);
});

test("an unisolated process sandbox refuses to run a harness (its commands would see host paths)", async () => {
  const plain = await createProcessRuntime({ root, bwrap: null, warn: () => {} }).create({
    spec: RuntimeSpec.parse({ backend: "process" }),
    labels: { node_id: "runner-test" },
  });
  sandboxes.push(plain);
  expect(plain.isolated).toBe(false);
  const run = runInSandbox({
    sandbox: plain,
    adapter: getHarness("command"),
    session,
    model: "m",
    instruction: "go",
    limits: { timeoutMs: 1000 },
    options: { argv: ["true"] },
  });
  await expect(run).rejects.toThrow(PolarError);
}, 30_000);
