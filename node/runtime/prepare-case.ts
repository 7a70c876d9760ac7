// Why: prepare actions are written once over the Sandbox interface, so one task setup — uploads
// of text, base64, a host file with a mode and a folder, then an exec that succeeds on its second
// attempt — is checked the same way on every runtime (Docker and bwrap tests call this).
import { expect } from "bun:test";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { prepareSandbox } from "./prepare.ts";
import { PrepareAction, type Sandbox } from "./types.ts";

/** Writes the host files the case uploads into `host`. */
export async function writePrepareSources(host: string): Promise<void> {
  await mkdir(join(host, "repo", "lib"), { recursive: true });
  await writeFile(join(host, "repo", "lib", "code.txt"), "code");
  await writeFile(join(host, "single.txt"), "from host");
}

/** Runs the case in `sandbox` (sources from writePrepareSources) and checks every step and file. */
export async function expectUploadsAndRetriedExec(sandbox: Sandbox, host: string): Promise<void> {
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
}
