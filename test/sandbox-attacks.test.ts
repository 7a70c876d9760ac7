// Attacks on a running node's sandbox boundary through Polar's rollout API (real bwrap sandboxes,
// the command harness as the agent): host-path upload sources (/proc/self/environ, a host folder,
// a symlink inside an allowed root that leads out) are refused with FastAPI's 422 and nothing of
// them reaches results, the store or the logs; network host and cap_add are refused unless the
// operator allows them; a sandbox that writes 200 MiB and starts 300 processes hits its limits as
// an agent outcome while the node stays up. Requests that skip the submit check (as coordinator
// assignments do) are refused again when the sandbox is created or prepared.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EvaluationDetail } from "../protocol/evaluation.ts";
import { TaskRequest, type SessionResult } from "../protocol/rollout.ts";
import { findBwrap } from "../node/runtime/process/bwrap.ts";
import { defaultProcessRoot } from "../node/runtime/process/process.ts";
import { mountsUnder } from "../node/runtime/process/sandbox-tmpfs.ts";
import { testNeeding } from "./helpers/host-tools.ts";
import { pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";
import { rolloutFetch } from "./helpers/rollout-fetch.ts";

const BWRAP = findBwrap();
const REQUIRE = process.env.POLAR_REQUIRE_BWRAP === "1";
const T = 240_000;

// What must never leave the host: a marker in the node's own environment and a host file's content.
const ENV_MARKER = `polar-env-marker-${randomBytes(8).toString("hex")}`;
const FILE_MARKER = `polar-host-secret-${randomBytes(8).toString("hex")}`;
process.env.POLAR_ATTACK_ENV_MARKER = ENV_MARKER;

const base = realpathSync(mkdtempSync(join(tmpdir(), "polar-attacks-")));
const allowed = join(base, "allowed");
const hostFolder = join(base, "host-folder");
mkdirSync(join(allowed, "repo"), { recursive: true });
mkdirSync(hostFolder);
writeFileSync(join(allowed, "repo", "in.txt"), "content from the allowed root");
writeFileSync(join(hostFolder, "secret.txt"), FILE_MARKER);
symlinkSync(hostFolder, join(allowed, "link-out"));

/** Everything written to the console while the nodes run (to prove no marker was logged). */
const logged: string[] = [];
const originals = { log: console.log, warn: console.warn, error: console.error, stderr: process.stderr.write.bind(process.stderr) };
for (const name of ["log", "warn", "error"] as const) {
  console[name] = (...args: unknown[]) => {
    logged.push(args.map(String).join(" "));
    originals[name](...args);
  };
}
process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
  logged.push(String(chunk));
  return (originals.stderr as (...a: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stderr.write;

const stacks: NodeStack[] = [];
afterAll(async () => {
  for (const s of stacks) await s.stop();
  console.log = originals.log;
  console.warn = originals.warn;
  console.error = originals.error;
  process.stderr.write = originals.stderr as typeof process.stderr.write;
  for (const s of stacks) rmSync(s.dir, { recursive: true, force: true });
  rmSync(base, { recursive: true, force: true });
}, 60_000);

let nextId = 0;
const taskId = (what: string) => `attack-${what}-${process.pid}-${nextId++}`;

function commandTask(
  id: string,
  script: string,
  runtime: Record<string, unknown> = {},
  evaluator: Record<string, unknown> = { strategy: "session_completed" },
) {
  return {
    task_id: id,
    instruction: "attack",
    agent: { harness: "command", settings: { argv: ["/bin/sh", "-c", script] } },
    runtime: { backend: "process", ...runtime },
    evaluator,
    metadata: { agent_timeout: 120 },
  };
}

const upload = (source: string, type: "upload_file" | "upload_dir" = "upload_file") => ({
  prepare: [{ type, source, path: type === "upload_file" ? "/work/x" : "/work/x-dir" }],
});

/** The node's SQLite files (db, WAL) hold no marker. */
function expectStoreClean(stack: NodeStack): void {
  for (const name of readdirSync(stack.dir)) {
    const bytes = readFileSync(join(stack.dir, name)).toString("latin1");
    expect(bytes.includes(ENV_MARKER)).toBe(false);
    expect(bytes.includes(FILE_MARKER)).toBe(false);
  }
}

function expectNoMarker(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text.includes(ENV_MARKER)).toBe(false);
  expect(text.includes(FILE_MARKER)).toBe(false);
}

/** The command evaluator's log (stdout, then stderr) of a result. */
function evaluationOutput(result: SessionResult): string {
  return EvaluationDetail.parse(result.metadata.evaluation).logs.command!.text.trim();
}

async function health(stack: NodeStack): Promise<{ status: string }> {
  return (await fetch(`${stack.node.url}/health`)).json() as Promise<{ status: string }>;
}

const describeBwrap = BWRAP || REQUIRE ? describe : describe.skip;
if (!BWRAP && !REQUIRE) test.skip("sandbox attacks on a running node [SKIPPED: bwrap not installed — apt-get install bubblewrap]", () => {});

describeBwrap("a node with the default sandbox policy", () => {
  let stack: NodeStack;
  beforeAll(async () => {
    stack = await startNodeStack({ sandbox: { host_path_roots: [allowed], pids_limit: 64, disk_mb: 64 } });
    stacks.push(stack);
  }, T);

  test(
    "host-path sources outside the roots are refused at submit with a 422 naming the field",
    async () => {
      const attacks: [string, Record<string, unknown>][] = [
        ["environ", upload("/proc/self/environ")],
        ["host-file", upload(join(hostFolder, "secret.txt"))],
        ["host-folder", upload(hostFolder, "upload_dir")],
        ["dotdot", upload(join(allowed, "..", "host-folder", "secret.txt"))],
        ["link-out-dir", upload(join(allowed, "link-out"), "upload_dir")],
        ["link-out-file", upload(join(allowed, "link-out", "secret.txt"))],
        ["eval-prepare", { prepare: [], eval_prepare: [{ type: "upload_dir", source: "/root", path: "/work/r" }] }],
      ];
      for (const [what, runtime] of attacks) {
        const id = taskId(what);
        const res = await submit(stack.node.url, commandTask(id, "true", runtime));
        expect(res.status).toBe(422);
        const key = "eval_prepare" in runtime ? "eval_prepare" : "prepare";
        expect(res.json.detail).toHaveLength(1);
        expect(res.json.detail[0]).toMatchObject({ loc: ["body", "runtime", key, 0, "source"], msg: expect.any(String), type: "value_error" });
        expectNoMarker(res.json);
        expect((await rolloutFetch(`${stack.node.url}/rollout/task/${id}`)).status).toBe(404);
      }
      expectStoreClean(stack);
    },
    T,
  );

  test(
    "network host and cap_add are refused at submit unless the operator allows them",
    async () => {
      const host = await submit(stack.node.url, commandTask(taskId("net"), "true", { network: "host" }));
      expect(host.status).toBe(422);
      expect(host.json.detail).toEqual([{ loc: ["body", "runtime", "network"], msg: expect.stringContaining("allow_host_network"), type: "value_error" }]);
      const caps = await submit(stack.node.url, commandTask(taskId("cap"), "true", { cap_add: ["NET_BIND_SERVICE", "SYS_ADMIN"] }));
      expect(caps.status).toBe(422);
      expect(caps.json.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
        ["body", "runtime", "cap_add", 0],
        ["body", "runtime", "cap_add", 1],
      ]);
    },
    T,
  );

  test(
    "a source inside the allowed root is uploaded (the policy refuses only what it must)",
    async () => {
      const id = taskId("allowed");
      const runtime = upload(join(allowed, "repo", "in.txt"));
      const evaluator = { strategy: "command", config: { sandbox: "agent", command: "cat /work/x", expected_output: "content from the allowed root" } };
      expect((await submit(stack.node.url, commandTask(id, "cat /work/x", runtime, evaluator))).status).toBe(200);
      const [r] = (await pollTask(stack.node.url, id)).results;
      expect(r!.status).toBe("COMPLETED");
      expect(r!.metadata.reward).toBe(1);
    },
    T,
  );

  test(
    "requests that skip the submit check are refused when the sandbox is prepared or created: masked errors, nothing read",
    async () => {
      const bypass = async (what: string, runtime: Record<string, unknown>): Promise<SessionResult> => {
        const id = taskId(what);
        // As a coordinator's assignment arrives: straight to the task book, no HTTP submit check.
        await stack.node.tasks.submit({
          request: TaskRequest.parse(commandTask(id, "cat /work/x /work/x-dir/secret.txt 2>/dev/null; true", runtime)),
          harness: "command",
          strategy: "per-call",
        });
        const [r] = (await pollTask(stack.node.url, id)).results;
        return r!;
      };
      for (const [what, runtime] of [
        ["environ", upload("/proc/self/environ")],
        ["link-out", upload(join(allowed, "link-out"), "upload_dir")],
      ] as const) {
        const r = await bypass(`bypass-${what}`, runtime);
        expect(r.status).toBe("ERROR");
        expect(r.trajectory.metadata.training_filter).toEqual({ masked: true, reason: "session_error" });
        expect(r.error).toMatch(/^prepare: upload_(file|dir) source .*outside the folders this node's operator allows/);
        expectNoMarker(r);
      }
      const net = await bypass("bypass-net", { network: "host" });
      expect(net.status).toBe("ERROR");
      expect(net.error).toMatch(/^sandbox_start: sandbox refused: runtime\.network/);
      expectStoreClean(stack);
    },
    T,
  );

  // As root the process limit is a pids cgroup (root ignores RLIMIT_NPROC): none in a container with a read-only cgroup tree.
  (process.getuid?.() === 0 ? testNeeding("pids_cgroup") : test)(
    "a sandbox writing 200 MiB and starting 300 processes is stopped by its limits; the rollout is the agent's outcome and the node stays healthy",
    async () => {
      const id = taskId("limits");
      // Forks first (children exit after 3 s and are reaped, so the evaluator's command can start),
      // then 1 MiB files until the disk is full; exit 3 when a fork was refused.
      const script = [
        `python3 -c 'import os, time
n, errno = 0, 0
try:
    for _ in range(300):
        if os.fork() == 0:
            time.sleep(3); os._exit(0)
        n += 1
except OSError as e:
    errno = e.errno
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
open("/tmp/forks", "w").write(f"{n} {errno}")'`,
        "i=0; while [ $i -lt 200 ]; do head -c 1048576 /dev/zero > /work/f$i || break; i=$((i+1)); done",
        'read forks errno < /tmp/forks; [ "$errno" = 0 ] || exit 3',
      ].join("\n");
      const evaluator = {
        strategy: "command",
        config: { sandbox: "agent", command: "cat /tmp/forks; echo; du -sm /work | cut -f1; ls /work | wc -l", expected_output: "never" },
      };
      expect((await submit(stack.node.url, commandTask(id, script, {}, evaluator))).status).toBe(200);
      const healthDuring = await health(stack);
      const [r] = (await pollTask(stack.node.url, id)).results;
      expect(healthDuring.status).toBe("ok");
      // The agent's outcome (trainable, reward 0), not a masked infrastructure failure.
      expect(r!.status).toBe("COMPLETED");
      expect(r!.metadata.agent).toMatchObject({ exit_code: 3, timed_out: false });
      const [forkLine, usedMb, files] = evaluationOutput(r!).split("\n");
      const [forks, errno] = forkLine!.split(" ").map(Number);
      expect(errno).toBe(11); // EAGAIN: the sandbox's pids limit refused the fork
      expect(forks).toBeLessThan(64);
      expect(Number(usedMb)).toBeLessThanOrEqual(64);
      expect(Number(files)).toBeLessThanOrEqual(64);
      console.log(`limits held on the node: ${forks} processes started of 300 (then EAGAIN), ${files} files of 1 MiB written of 200 (${usedMb} MiB)`);
      expect(await health(stack)).toMatchObject({ status: "ok" });
      // Nothing of the sandbox is left on the host: no tmpfs, no folder.
      const nodeDir = join(defaultProcessRoot(), stack.node.config.node_id);
      expect(mountsUnder(nodeDir)).toEqual([]);
      expect(existsSync(nodeDir) ? readdirSync(nodeDir) : []).toEqual([]);
    },
    T,
  );
});

describeBwrap("a node whose operator allows network host and one capability", () => {
  let stack: NodeStack;
  beforeAll(async () => {
    stack = await startNodeStack({ tasks: "", sandbox: { allow_host_network: true, allow_cap_add: ["NET_BIND_SERVICE"] } });
    stacks.push(stack);
  }, T);

  test(
    "network host and the allowed capability are granted; another capability and host paths are still refused",
    async () => {
      const id = taskId("granted");
      const evaluator = {
        strategy: "command",
        config: { sandbox: "agent", command: "grep CapEff /proc/self/status | cut -f2; tail -n +3 /proc/net/dev | wc -l", expected_output: "" },
      };
      expect((await submit(stack.node.url, commandTask(id, "true", { network: "host", cap_add: ["NET_BIND_SERVICE"] }, evaluator))).status).toBe(200);
      const [r] = (await pollTask(stack.node.url, id)).results;
      expect(r!.status).toBe("COMPLETED");
      const [capEff, interfaces] = evaluationOutput(r!).split("\n");
      expect(BigInt(`0x${capEff}`)).toBe(1n << 10n); // CAP_NET_BIND_SERVICE only
      const hostInterfaces = readFileSync("/proc/net/dev", "utf8").trim().split("\n").length - 2;
      expect(Number(interfaces)).toBe(hostInterfaces);

      const other = await submit(stack.node.url, commandTask(taskId("other-cap"), "true", { cap_add: ["SYS_ADMIN"] }));
      expect(other.status).toBe(422);
      // No task file: no host-path root at all.
      const path = await submit(stack.node.url, commandTask(taskId("no-roots"), "true", upload(join(allowed, "repo", "in.txt"))));
      expect(path.status).toBe(422);
      expect(path.json.detail[0].msg).toContain("outside the folders");
    },
    T,
  );
});

test("no marker reached the console", () => {
  for (const line of logged) {
    expect(line.includes(ENV_MARKER)).toBe(false);
    expect(line.includes(FILE_MARKER)).toBe(false);
  }
});
