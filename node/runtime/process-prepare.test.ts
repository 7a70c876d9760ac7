// Prepare actions (written once over the Sandbox interface) on the process runtime under bwrap:
// the same task setup as on Docker, with relative paths resolved in the workdir.
import { afterAll, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBwrap } from "./bwrap.ts";
import { prepareSandbox } from "./prepare.ts";
import { createProcessRuntime } from "./process.ts";
import { PrepareAction, RuntimeSpec } from "./types.ts";

const root = await mkdtemp(join(tmpdir(), "polar-proc-prepare-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const run = findBwrap() || process.env.POLAR_REQUIRE_BWRAP === "1" ? test : test.skip;
run(`prepare actions in a process sandbox${findBwrap() ? "" : " [SKIPPED: bwrap not installed]"}`, async () => {
  const host = join(root, "src");
  await mkdir(join(host, "repo", "lib"), { recursive: true });
  await writeFile(join(host, "repo", "lib", "code.txt"), "code");
  await writeFile(join(host, "single.txt"), "from host");
  const sandbox = await createProcessRuntime({ root: join(root, "runtime") }).create({ spec: RuntimeSpec.parse({ backend: "process" }), labels: { node_id: "prepare" } });
  try {
    const actions = [
      { type: "upload_file", path: "notes/a.txt", content: "text" },
      { type: "upload_file", path: "/opt/b.bin", content_base64: Buffer.from("base64 body").toString("base64") },
      { type: "upload_file", path: "tool.sh", source: join(host, "single.txt"), mode: 0o700 },
      { type: "upload_dir", source: join(host, "repo"), path: "repo" },
      { type: "exec", command: "[ -f /tmp/once ] || { touch /tmp/once; exit 1; }", max_attempts: 3 },
    ].map((a) => PrepareAction.parse(a));
    const steps = await prepareSandbox(sandbox, actions);
    expect(steps.map((s) => [s.type, s.attempts])).toEqual([
      ["upload_file", 1],
      ["upload_file", 1],
      ["upload_file", 1],
      ["upload_dir", 1],
      ["exec", 2],
    ]);
    const check = await sandbox.exec({ command: "cat notes/a.txt /opt/b.bin tool.sh repo/lib/code.txt; stat -c %a tool.sh" });
    expect(check.stdout).toBe("textbase64 bodyfrom hostcode700\n");
  } finally {
    await sandbox.destroy();
  }
}, 60_000);
