// Why: `bun run learn` — runs examples/learn/train.py with a Python that has websockets
// (POLAR_PYTHON, Debian's /usr/bin/python3, python3 on PATH) and this bun for the Polar processes;
// arguments after `--` go to train.py (e.g. `bun run learn -- --short`).
import { join } from "node:path";
import { findPython } from "../../scripts/find-python.ts";

const python = findPython();
if (!("python" in python)) {
  console.error(`bun run learn needs ${python.missing}`);
  process.exit(2);
}
const child = Bun.spawn([python.python, join(import.meta.dir, "train.py"), "--bun", process.execPath, ...process.argv.slice(2)], {
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await child.exited);
