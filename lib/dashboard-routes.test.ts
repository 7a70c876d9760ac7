import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };

const ROOT = join(import.meta.dir, "..");

test("the vendored uPlot is the devDependency's own build, byte for byte, with its license", () => {
  const installed = JSON.parse(readFileSync(join(ROOT, "node_modules/uplot/package.json"), "utf8")) as { version: string };
  expect(pkg.devDependencies.uplot).toBe(installed.version);
  for (const file of ["uPlot.iife.min.js", "uPlot.min.css"]) {
    expect(readFileSync(join(ROOT, "dashboard/vendor", file)).equals(readFileSync(join(ROOT, "node_modules/uplot/dist", file)))).toBe(true);
  }
  expect(readFileSync(join(ROOT, "dashboard/vendor/uPlot.LICENSE"), "utf8")).toBe(readFileSync(join(ROOT, "node_modules/uplot/LICENSE"), "utf8"));
});
