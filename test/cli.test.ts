// The `polar` bin as an operator runs it: real processes, flags, a call through them, and a
// clean stop on SIGTERM with the recorded call still in the SQLite file.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { SessionResult } from "../protocol/rollout.ts";
import { CallsRepo } from "../node/store/calls-repo.ts";
import { openNodeStore } from "../node/store/db.ts";
import { testNeeding } from "./helpers/host-tools.ts";

/** The demo's default: process sandboxes (bwrap) and the bundled Python tasks (pytest). */
const withSandboxes = testNeeding("bwrap", "pytest");

const BIN = join(import.meta.dir, "..", "bin", "polar.ts");
const running: Subprocess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.kill();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Starts `polar <args>` and waits for the line announcing its URL. */
async function start(args: string[], announce: RegExp): Promise<{ proc: Subprocess<"ignore", "pipe", "pipe">; url: string }> {
  const proc = Bun.spawn(["bun", BIN, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  running.push(proc);
  const decoder = new TextDecoder();
  let seen = "";
  for (const stream of [proc.stdout, proc.stderr]) {
    void (async () => {
      for await (const chunk of stream) seen += decoder.decode(chunk);
    })();
  }
  for (let i = 0; i < 200; i++) {
    const url = seen.match(announce)?.[1];
    if (url) return { proc, url };
    await Bun.sleep(50);
  }
  throw new Error(`polar ${args[0]} never announced its URL; output:\n${seen}`);
}

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["bun", BIN, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe("polar CLI", () => {
  test("mock-engine + gateway as processes serve a call, and the gateway stops cleanly keeping it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polar-cli-"));
    dirs.push(dir);
    const db = join(dir, "gw.db");
    const engine = await start(["mock-engine", "--port", "0"], /listening on (http:\/\/\S+)/);
    const admin = "cli-test-admin-token-0123";
    const gateway = await start(
      ["gateway", "--port", "0", "--engine", engine.url, "--model", "Qwen/Qwen3-8B", "--db", db, "--admin-token", admin, "--max-tokens-cap", "64"],
      /listening on (http:\/\/\S+)/,
    );

    const session = (await (await fetch(`${gateway.url}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${admin}` } })).json()) as {
      id: string;
      openai_base_url: string;
    };
    const res = await fetch(`${session.openai_base_url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "hi" }], max_tokens: 9999 }),
    });
    expect(res.status).toBe(200);

    gateway.proc.kill("SIGTERM");
    expect(await gateway.proc.exited).toBe(0);
    const store = await openNodeStore(db);
    const calls = await new CallsRepo(store.db).list(session.id);
    store.close();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.request.sampling.max_tokens).toBe(64);
    expect(calls[0]!.output_ids!.length).toBeGreaterThan(0);
  });

  withSandboxes(
    "the README's demo runs bundled tasks through the node's rollout API and writes their results, never loading dockerode, each warning once",
    async () => {
      const out = mkdtempSync(join(tmpdir(), "polar-cli-demo-"));
      dirs.push(out);
      // Loading any file of dockerode ends the demo with exit 97: the default path must not need it.
      const preload = join(out, "no-dockerode.ts");
      writeFileSync(
        preload,
        `Bun.plugin({ name: "no-dockerode", setup(build) { build.onLoad({ filter: /\\/node_modules\\/dockerode\\// }, (args) => { console.error("dockerode loaded: " + args.path); process.exit(97); }); } });\n`,
      );
      const proc = Bun.spawn(["bun", "--preload", preload, BIN, "demo", "--out", out], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      const demo = { code, stdout, stderr };
      expect(demo.code).toBe(0);
      // Nothing on stderr is said twice (a warning per sandbox or per rollout would be).
      const said = demo.stderr.split("\n").filter((l) => l.trim() !== "");
      expect(said.filter((line, i) => said.indexOf(line) !== i)).toEqual([]);
      const results = (await Bun.file(join(out, "results.jsonl")).text())
        .trim()
        .split("\n")
        .map((line) => SessionResult.parse(JSON.parse(line)));
      expect(results).toHaveLength(12);
      expect(new Set(results.map((r) => r.task_id)).size).toBe(3);
      for (const r of results) {
        expect(r.status).toBe("COMPLETED");
        expect(r.trajectory.traces.length).toBeGreaterThan(0);
      }
      expect(new Set(results.map((r) => r.metadata.reward))).toEqual(new Set([0, 1]));
    },
    240_000,
  );

  test("polar node: settings errors name the key (exit 2)", async () => {
    const bad = await run(["node", "--run-workers", "0", "--admin-token", "long-enough-admin-token"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("workers.run:");
  }, 60_000);

  test("bad flags are usage errors (exit 2) that name the flag; --help lists the flags", async () => {
    const unknown = await run(["gateway", "--bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("bogus");
    const badBackend = await run(["gateway", "--backend", "tgi"]);
    expect(badBackend.code).toBe(2);
    expect(badBackend.stderr).toContain("--backend must be one of vllm, sglang, tito, openai, anthropic");
    const badCommand = await run(["launch"]);
    expect(badCommand.code).toBe(2);
    expect(badCommand.stderr).toContain('unknown command "launch"');
    const shortToken = await run(["gateway", "--admin-token", "short", "--port", "0"]);
    expect(shortToken.code).toBe(2);
    expect(shortToken.stderr).toContain("admin token must be at least 16 characters");
    const badUrl = await run(["gateway", "--engine", "not-a-url", "--admin-token", "long-enough-admin-token"]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain("urls");
    const missingScript = await run(["mock-engine", "--script", "/nonexistent/steps.json"]);
    expect(missingScript.code).toBe(2);
    expect(missingScript.stderr).toContain("--script /nonexistent/steps.json");
    const help = await run(["mock-engine", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--fail-first");
  });
});
