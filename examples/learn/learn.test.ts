// The learning loop closes: the short run of examples/learn/train.py (a real cluster of Polar
// processes, the trainable mock policy starting at π(solve) = 0.2, five GRPO steps through the
// Python client) must raise the mean reward by a margin no seed should miss, with every recorded
// logprob equal to the policy's own under the version it was sampled with; plus the example's
// math tests. Skipped without a Python that has websockets (POLAR_REQUIRE_PYTHON=1: fails).
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPython } from "../../scripts/find-python.ts";

const HERE = import.meta.dir;
const ROOT = join(HERE, "../..");

function readCsv(path: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path, "utf8").trim().split("\n");
  const keys = header!.split(",");
  return lines.map((line) => Object.fromEntries(line.split(",").map((v, i) => [keys[i]!, v])));
}

const python = findPython();
if ("python" in python) {
  test("the example's math: policy mirror, logprob check, clipped GRPO update, a seeded bandit run, the SVG", async () => {
    const out = mkdtempSync(join(tmpdir(), "polar-learn-math-"));
    try {
      const report = join(out, "report.json");
      const child = Bun.spawn([python.python, join(ROOT, "clients/python/tests/run_suite.py"), "--start", join(HERE, "tests"), "--report", report], {
        stdout: "inherit",
        stderr: "inherit",
      });
      expect(await child.exited).toBe(0);
      const summary = JSON.parse(readFileSync(report, "utf8")) as { tests_run: number; failures: number; errors: number; skipped: number };
      expect(summary).toMatchObject({ failures: 0, errors: 0, skipped: 0 });
      expect(summary.tests_run).toBeGreaterThanOrEqual(7);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  test("GRPO through Polar raises the mean reward (short run, seeded)", async () => {
    const out = mkdtempSync(join(tmpdir(), "polar-learn-"));
    try {
      const child = Bun.spawn([python.python, join(HERE, "train.py"), "--short", "--seed", "3", "--out", out, "--bun", process.execPath], {
        stdout: "inherit",
        stderr: "inherit",
      });
      expect(await child.exited).toBe(0);
      const rows = readCsv(join(out, "curve.csv"));
      const reward = rows.map((r) => Number(r.mean_reward));
      expect(rows.map((r) => Number(r.policy_version))).toEqual([1, 2, 3, 4, 5]);
      expect(rows.every((r) => Number(r.logprob_mismatches) === 0)).toBe(true);
      expect(rows.every((r) => Number(r.max_staleness_trained) <= 1)).toBe(true);
      expect(Number(rows[0]!.solve_probability_before)).toBeCloseTo(0.2, 9);
      expect(reward[0]!).toBeLessThan(0.6);
      const lastTwo = (reward[3]! + reward[4]!) / 2;
      expect(lastTwo).toBeGreaterThanOrEqual(reward[0]! + 0.25);
      expect(lastTwo).toBeGreaterThanOrEqual(0.6);
      expect(Number(rows[4]!.solve_probability_after)).toBeGreaterThanOrEqual(0.8);
      const svg = readFileSync(join(out, "curve.svg"), "utf8");
      expect(svg.startsWith("<svg")).toBe(true);
      expect(svg.match(/<circle /g)?.length).toBe(5);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 900_000);
} else if (process.env.POLAR_REQUIRE_PYTHON === "1") {
  test("learning loop [POLAR_REQUIRE_PYTHON=1]", () => {
    throw new Error(`POLAR_REQUIRE_PYTHON=1 but ${python.missing}`);
  });
} else {
  test.skip(`learning loop [SKIPPED: needs ${python.missing}]`, () => {});
}
