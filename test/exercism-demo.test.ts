// `polar demo --tasks` on the imported Exercism tasks: the mock engine's policy solves them as it
// solves the bundled ones — the reference solution in some sessions, the wrong fix (a mutant the
// hidden tests reject) in others — so the results carry rewards of both kinds, scored by the
// hidden tests in fresh sandboxes.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SessionResult } from "../protocol/rollout.ts";

const ROOT = resolve(import.meta.dir, "..");
const out = mkdtempSync(join(tmpdir(), "polar-exercism-demo-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

test("polar demo --tasks tasks/exercism-python/tasks.jsonl: both rewards, the failing sessions changed the stub", async () => {
  const proc = Bun.spawn(
    ["bun", join(ROOT, "bin/polar.ts"), "demo", "--tasks", join(ROOT, "tasks/exercism-python/tasks.jsonl"), "--count", "3", "--samples", "4", "--out", out],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) console.error(stdout.slice(-3000), stderr.slice(-3000));
  expect(code).toBe(0);
  const results = (await Bun.file(join(out, "results.jsonl")).text())
    .trim()
    .split("\n")
    .map((line) => SessionResult.parse(JSON.parse(line)));
  expect(results).toHaveLength(12);
  expect([...new Set(results.map((r) => r.task_id))].every((id) => id.startsWith("exercism-python-"))).toBe(true);
  expect(new Set(results.map((r) => r.metadata.reward))).toEqual(new Set([0, 1]));
  for (const r of results) {
    expect(r.status).toBe("COMPLETED");
    const evaluation = r.metadata.evaluation as { status: string; patch_files: string[]; fail_to_pass: { passed: number; total: number } };
    expect(evaluation.status).toBe(r.metadata.reward === 1 ? "resolved" : "unresolved");
    if (r.metadata.reward === 1) expect(evaluation.fail_to_pass.passed).toBe(evaluation.fail_to_pass.total);
  }
  // At least one failing session applied the wrong fix (a real edit the hidden tests reject).
  const wrongFixes = results.filter((r) => r.metadata.reward === 0 && (r.metadata.evaluation as { patch_files: string[] }).patch_files.length > 0);
  expect(wrongFixes.length).toBeGreaterThan(0);
}, 300_000);
