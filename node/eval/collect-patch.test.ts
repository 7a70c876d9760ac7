// The agent's change is collected from its work tree and applied in a fresh sandbox exactly:
// untracked, deleted, binary and mode-changed files; harness state folders and caches left out;
// an agent that committed is still diffed against the base. A patch that does not apply is
// reward 0 with the reason.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Task } from "../../protocol/task.ts";
import { BASE_COMMIT_ENV } from "./bundled.ts";
import { collectPatch } from "./collect-patch.ts";
import { evaluate } from "./evaluate.ts";
import { freshEvalSandbox, runtimeSource } from "./sandbox-source.ts";
import { evaluateSwePatch } from "./swe.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import { runtimesForTests } from "../../test/support/runtime/test-runtimes.ts";
import type { Sandbox } from "../runtime/types.ts";

const BINARY = Uint8Array.from([0, 1, 2, 255, 254, 0, 10, 13, 128, 0x89, 0x50, 0x4e, 0x47]);
let repoDir: string;

beforeAll(() => {
  repoDir = mkdtempSync(join(tmpdir(), "polar-collect-repo-"));
  mkdirSync(join(repoDir, "src"));
  writeFileSync(join(repoDir, "src/keep.txt"), "one\ntwo\n");
  writeFileSync(join(repoDir, "src/gone.txt"), "delete me\n");
  writeFileSync(join(repoDir, "logo.bin"), BINARY);
  writeFileSync(join(repoDir, "run.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(join(repoDir, "run.sh"), 0o644);
});
afterAll(() => rmSync(repoDir, { recursive: true, force: true }));

function syntheticTask(): Task {
  return Task.parse({
    task_id: "collect-fidelity",
    instruction: "change things",
    runtime: {
      image: "polar-bookworm:dev",
      workdir: "/work",
      prepare: [
        { type: "upload_dir", source: repoDir, path: "/work" },
        { type: "exec", command: "git init -q && git add -A && git commit -q -m base", cwd: "/work", env: BASE_COMMIT_ENV },
      ],
    },
    evaluator: { strategy: "swe", config: { test_command: "true", parser: "tap" } },
  });
}

/** What the agent does: edits, deletes, binary files, a mode change, harness folders, a commit. */
const AGENT_WORK = [
  "printf 'one\\nTWO\\nthree\\n' > src/keep.txt",
  "rm src/gone.txt",
  "printf '\\000\\377binary\\000new' > new.bin",
  "printf '\\211PNG\\000changed\\377' > logo.bin",
  "chmod +x run.sh",
  "mkdir -p docs && echo 'untracked notes' > docs/NOTES.md",
  "mkdir -p .claude .codex .qwen .pi .mini node_modules/left-pad __pycache__ src/__pycache__ .pytest_cache",
  "echo '{}' > .claude/settings.json; echo x > .codex/history; echo x > .qwen/state; echo x > .pi/s; echo x > .mini/s",
  "echo 'module.exports=1' > node_modules/left-pad/index.js; printf '\\000pyc' > src/__pycache__/keep.cpython-311.pyc; echo x > .pytest_cache/v",
  "git -c user.name=a -c user.email=a@b add src/keep.txt && git -c user.name=a -c user.email=a@b commit -qm 'agent commit'",
].join(" && ");

/** Every file outside .git with its mode and content hash: what a work tree is. */
const MANIFEST =
  'find . -path ./.git -prune -o -type f -print | LC_ALL=C sort | while read -r f; do printf \'%s %s \' "$f" "$(stat -c %a "$f")"; sha256sum < "$f"; done';

async function sh(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec({ command: ["/bin/sh", "-c", command], timeoutMs: 60_000 });
  if (result.exit_code !== 0) throw new Error(`${command}: ${result.stderr}`);
  return result.stdout;
}

const runtimes = await runtimesForTests("collect-patch");

for (const { name, runtime, nodeId } of runtimes) {
  describe(`patch collection and application (${name})`, () => {
    const source = runtimeSource(runtime, nodeId);
    afterAll(() => runtime.removeLeftovers(nodeId));

    test("untracked, deleted, binary and mode changes survive; harness folders and caches do not", async () => {
      const task = syntheticTask();
      const agent = await freshEvalSandbox(source, task, "agent");
      const fresh = await freshEvalSandbox(source, task, "fresh");
      try {
        await sh(agent, AGENT_WORK);
        const patch = await collectPatch(agent, "HEAD~1");
        expect(patch.files.sort()).toEqual(["docs/NOTES.md", "logo.bin", "new.bin", "run.sh", "src/gone.txt", "src/keep.txt"]);
        await fresh.putFiles({ "/polar/run/agent.patch": patch.bytes });
        await sh(fresh, "git apply --binary /polar/run/agent.patch");
        const expected = (await sh(agent, MANIFEST))
          .split("\n")
          .filter((l) => !/^\.\/(\.claude|\.codex|\.qwen|\.pi|\.mini|node_modules|\.pytest_cache)\/|__pycache__/.test(l));
        expect((await sh(fresh, MANIFEST)).split("\n")).toEqual(expected);
        expect(expected.some((l) => l.startsWith("./run.sh 755 "))).toBe(true);
        expect(expected.some((l) => l.startsWith("./src/gone.txt"))).toBe(false);
      } finally {
        await agent.destroy();
        await fresh.destroy();
      }
    }, 180_000);

    test("a bundled task fixed by an agent that also left harness state and committed: reward 1, evaluated in a fresh sandbox", async () => {
      const { tasks } = await loadTaskFile(resolve(import.meta.dir, "../../tasks/tasks.jsonl"));
      const task = tasks.find((t) => t.task_id === "py-lru-get-refresh")!;
      const agent = await freshEvalSandbox(source, task, "agent-lru");
      try {
        await agent.putFiles({ "/polar/run/fix.patch": task.patch! });
        await sh(
          agent,
          "git apply /polar/run/fix.patch && mkdir -p .claude __pycache__ && echo '{}' > .claude/todos.json && echo x > __pycache__/junk.pyc && git -c user.name=a -c user.email=a@b commit -qam fix",
        );
        const result = await evaluate({ task, agentSandbox: agent, source, rolloutId: "lru" });
        expect(result.reward).toBe(1);
        expect(result.detail.status).toBe("resolved");
        expect(result.detail.patch_files).toEqual(["cachetools_lite/lru.py"]);
        expect(result.detail.sandbox_id).not.toBe(agent.id);
        expect(result.detail.fail_to_pass).toEqual({ passed: 2, total: 2 });
        expect(result.detail.tests.filter((t) => t.expected !== null).every((t) => t.outcome === "passed")).toBe(true);
      } finally {
        await agent.destroy();
      }
    }, 180_000);

    test("a patch that does not apply: reward 0 with the reason, not an error", async () => {
      const { tasks } = await loadTaskFile(resolve(import.meta.dir, "../../tasks/tasks.jsonl"));
      const task = tasks.find((t) => t.task_id === "js-chunk-drops-remainder")!;
      const stale =
        "diff --git a/src/chunk.js b/src/chunk.js\n--- a/src/chunk.js\n+++ b/src/chunk.js\n@@ -1,3 +1,3 @@\n-this line is not in the file\n+replacement\n context\n context\n";
      const result = await evaluateSwePatch({ task, patch: stale, source, rolloutId: "stale" });
      expect(result.reward).toBe(0);
      expect(result.detail.status).toBe("patch_failed");
      expect(result.detail.reason).toContain("does not apply");
      expect(result.detail.logs.apply!.text).toContain("src/chunk.js");
      expect(result.detail.tests).toEqual([]);
    }, 120_000);
  });
}
