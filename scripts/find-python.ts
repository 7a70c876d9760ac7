// Why: tests and examples that run the Python client need a Python 3.10+ with `websockets` (Debian's
// python3-websockets); they find one the same way — POLAR_PYTHON, then Debian's /usr/bin/python3,
// then python3 on PATH — and name what is missing when none fits.
import { existsSync } from "node:fs";

export type PythonProbe = { python: string } | { missing: string };

function fits(python: string): boolean {
  const probe = Bun.spawnSync([python, "-c", "import sys, websockets; sys.exit(0 if sys.version_info >= (3, 10) else 1)"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  return probe.exitCode === 0;
}

export function findPython(): PythonProbe {
  const candidates = [process.env.POLAR_PYTHON, "/usr/bin/python3", Bun.which("python3")].filter((p): p is string => typeof p === "string" && p !== "");
  for (const python of candidates) if ((python.includes("/") ? existsSync(python) : true) && fits(python)) return { python };
  return { missing: `a Python 3.10+ with websockets (apt-get install python3-websockets; tried ${candidates.join(", ") || "none"}; POLAR_PYTHON picks one)` };
}
