// The docker runtime on a real engine: exec (argv, shell, stdin, env, cwd, bounded output,
// timeout, abort), files in and out, the run folder, destroy, and the host's node in Debian.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tarStream from "tar-stream";
import { PolarError } from "../../../protocol/errors.ts";
import { containerName } from "./docker-config.ts";
import { BOOKWORM, BUSYBOX, dockerForTests, expectNoContainers, testNodeId } from "../../../test/support/runtime/docker-test-env.ts";
import { createDockerRuntime } from "./docker.ts";
import { RuntimeSpec, SANDBOX_NODE_DIR, SANDBOX_RUN_DIR, type Sandbox } from "../types.ts";

const docker = await dockerForTests("docker runtime", [BUSYBOX, BOOKWORM]);
const T = 120_000;

async function tarNames(tar: Uint8Array): Promise<Record<string, string>> {
  const extract = tarStream.extract();
  const names: Record<string, string> = {};
  const done = (async () => {
    for await (const entry of extract) {
      names[entry.header.name] = entry.header.type;
      entry.resume();
    }
  })();
  extract.end(Buffer.from(tar));
  await done;
  return names;
}

if (docker) {
  describe("docker runtime", () => {
    const nodeId = testNodeId("docker");
    let runRoot: string;
    let sandbox: Sandbox;
    const runtime = () => createDockerRuntime({ docker, runRoot });

    beforeAll(async () => {
      runRoot = await mkdtemp(join(tmpdir(), "polar-docker-test-"));
      sandbox = await runtime().create({
        spec: RuntimeSpec.parse({ image: BUSYBOX, workdir: "/work/repo", env: { FROM_SPEC: "spec" } }),
        labels: { node_id: nodeId, rollout_id: "r-1" },
      });
    }, T);

    afterAll(async () => {
      await runtime().removeLeftovers(nodeId);
      await expectNoContainers(docker, nodeId);
      await rm(runRoot, { recursive: true, force: true });
    }, T);

    test(
      "exec: argv and shell, exit codes, separate stdout and stderr, env, cwd, stdin",
      async () => {
        const shell = await sandbox.exec({ command: 'echo "out $FROM_SPEC $EXTRA"; pwd; echo oops >&2; exit 7', env: { EXTRA: "x" } });
        expect(shell).toMatchObject({ exit_code: 7, stdout: "out spec x\n/work/repo\n", stderr: "oops\n", timed_out: false });
        const argv = await sandbox.exec({ command: ["sh", "-c", "pwd; cat"], cwd: "/tmp", stdin: "fed through stdin" });
        expect(argv).toMatchObject({ exit_code: 0, stdout: "/tmp\nfed through stdin", stderr: "" });
        const missing = await sandbox.exec({ command: ["no-such-program"] });
        expect(missing.exit_code).toBe(127);
      },
      T,
    );

    test(
      "exec: arguments and env values reach the command verbatim (quotes, newlines, $)",
      async () => {
        const tricky = 'it\'s "quoted"\n$HOME `id` \\ end';
        const result = await sandbox.exec({ command: ["printf", "%s|%s", tricky, "two words"], env: { TRICKY: tricky } });
        expect(result).toMatchObject({ exit_code: 0, stdout: `${tricky}|two words` });
        const env = await sandbox.exec({ command: 'printf %s "$TRICKY"', env: { TRICKY: tricky } });
        expect(env.stdout).toBe(tricky);
        const bad = await sandbox.exec({ command: "true", env: { "NOT-A-NAME": "x" } }).catch((e: PolarError) => e.code);
        expect(bad).toBe("bad_request");
        const noDir = await sandbox.exec({ command: "true", cwd: "/does/not/exist" });
        expect(noDir.exit_code).toBe(1);
      },
      T,
    );

    test(
      "exec: concurrent commands each get their own output and exit code",
      async () => {
        const results = await Promise.all([1, 2, 3, 4].map((n) => sandbox.exec({ command: `sleep 0.${n}; echo run-${n}; exit ${n}` })));
        expect(results.map((r) => [r.exit_code, r.stdout])).toEqual([1, 2, 3, 4].map((n) => [n, `run-${n}\n`]));
      },
      T,
    );

    test(
      "exec: output kept up to the bound, the rest counted",
      async () => {
        const result = await sandbox.exec({ command: "head -c 10000 /dev/zero; head -c 300 /dev/zero >&2", maxOutputBytes: 100 });
        expect(result.stdout.length).toBe(100);
        expect(result.stdout_dropped_bytes).toBe(9900);
        expect(result.stderr.length).toBe(100);
        expect(result.stderr_dropped_bytes).toBe(200);
      },
      T,
    );

    test(
      "exec: a background child neither holds the result nor survives the command",
      async () => {
        const result = await sandbox.exec({ command: "sleep 300 & echo started", timeoutMs: 60_000 });
        expect(result).toMatchObject({ exit_code: 0, stdout: "started\n", timed_out: false });
        const ps = await sandbox.exec({ command: "ps -o comm,args | grep -c '^sleep *sleep 300' || true" });
        expect(ps.stdout.trim()).toBe("0");
      },
      T,
    );

    test(
      "exec: timeout kills the whole process group",
      async () => {
        const result = await sandbox.exec({ command: "sleep 300 & sleep 301", timeoutMs: 500 });
        expect(result).toMatchObject({ exit_code: null, timed_out: true });
        const ps = await sandbox.exec({ command: "ps -o args | grep -c '^sleep 30[01]' || true" });
        expect(ps.stdout.trim()).toBe("0");
      },
      T,
    );

    test(
      "exec: abort kills the command",
      async () => {
        const controller = new AbortController();
        const running = sandbox.exec({ command: "echo before; sleep 302", signal: controller.signal });
        setTimeout(() => controller.abort(), 500);
        const result = await running;
        expect(result).toMatchObject({ exit_code: null, timed_out: false, stdout: "before\n" });
        const ps = await sandbox.exec({ command: "ps -o args | grep -c '^sleep 302' || true" });
        expect(ps.stdout.trim()).toBe("0");
      },
      T,
    );

    test(
      "files: putFiles (relative to workdir, with mode), readFile, missing file",
      async () => {
        await sandbox.putFiles({ "src/a.txt": "alpha", "/tmp/deep/b.sh": "#!/bin/sh\necho b\n" }, { mode: 0o755 });
        expect(new TextDecoder().decode(await sandbox.readFile("/work/repo/src/a.txt"))).toBe("alpha");
        const run = await sandbox.exec({ command: ["/tmp/deep/b.sh"] });
        expect(run.stdout).toBe("b\n");
        const err = await sandbox.readFile("/nope/missing").catch((e: unknown) => e);
        expect(err).toBeInstanceOf(PolarError);
        expect((err as PolarError).code).toBe("not_found");
      },
      T,
    );

    test(
      "files: putDirectory keeps folders, modes and symlinks; getArchive returns them",
      async () => {
        const host = await mkdtemp(join(tmpdir(), "polar-repo-"));
        await mkdir(join(host, "pkg"));
        await writeFile(join(host, "pkg", "mod.py"), "X = 1\n");
        await writeFile(join(host, "run.sh"), "#!/bin/sh\necho ran\n", { mode: 0o755 });
        await symlink("pkg/mod.py", join(host, "link.py"));
        await sandbox.putDirectory(host, "/srv/new/repo");
        const listing = await sandbox.exec({ command: "cd /srv/new/repo && ./run.sh && readlink link.py && cat link.py" });
        expect(listing).toMatchObject({ exit_code: 0, stdout: "ran\npkg/mod.py\nX = 1\n" });
        const names = await tarNames(await sandbox.getArchive("/srv/new/repo"));
        expect(names).toMatchObject({ "repo/": "directory", "repo/pkg/mod.py": "file", "repo/link.py": "symlink", "repo/run.sh": "file" });
        await rm(host, { recursive: true, force: true });
      },
      T,
    );

    test(
      "run folder: the host side and SANDBOX_RUN_DIR are the same folder",
      async () => {
        await writeFile(join(sandbox.hostRunDir, "from-host"), "hello");
        const seen = await sandbox.exec({ command: `cat ${SANDBOX_RUN_DIR}/from-host; echo back > ${SANDBOX_RUN_DIR}/from-sandbox` });
        expect(seen.stdout).toBe("hello");
        expect(await Bun.file(join(sandbox.hostRunDir, "from-sandbox")).text()).toBe("back\n");
      },
      T,
    );

    test(
      "labels and destroy: container labelled, destroy removes container and run folder, twice is fine",
      async () => {
        const extra = await runtime().create({ spec: RuntimeSpec.parse({ image: BUSYBOX }), labels: { node_id: nodeId, rollout_id: "r-2" } });
        const info = await docker.getContainer(containerName(extra.id)).inspect();
        expect(info.Config.Labels).toMatchObject({ "polar.node_id": nodeId, "polar.rollout_id": "r-2", "polar.sandbox_id": extra.id });
        expect(await extra.alive()).toBe(true);
        await extra.destroy();
        await extra.destroy();
        expect(await extra.alive()).toBe(false);
        const gone = await docker
          .getContainer(containerName(extra.id))
          .inspect()
          .catch((e: { statusCode?: number }) => e.statusCode);
        expect(gone).toBe(404);
        expect(existsSync(extra.hostRunDir)).toBe(false);
        const afterDestroy = await extra.exec({ command: "true" }).catch((e: PolarError) => e.code);
        expect(afterDestroy).toBe("not_found");
      },
      T,
    );

    test(
      "a container killed from outside: exec fails or reports no exit code, never hangs; alive() is false",
      async () => {
        const victim = await runtime().create({ spec: RuntimeSpec.parse({ image: BUSYBOX }), labels: { node_id: nodeId } });
        const running = victim.exec({ command: "sleep 300" }).then(
          (r) => r.exit_code,
          (e: PolarError) => e.code,
        );
        await Bun.sleep(300);
        await docker.getContainer(containerName(victim.id)).kill();
        expect([null, 137, "not_found", "internal"]).toContain(await running);
        expect(await victim.alive()).toBe(false);
        const after = await victim.exec({ command: "true" }).then(
          (r) => r.exit_code,
          (e: PolarError) => e.code,
        );
        expect(["not_found", "internal"]).toContain(after as string);
        await victim.destroy();
      },
      T,
    );

    test(
      "a missing image is not_found and leaves nothing behind",
      async () => {
        const err = await runtime()
          .create({ spec: RuntimeSpec.parse({ image: "polar-no-such-image:never" }), labels: { node_id: nodeId } })
          .catch((e: unknown) => e);
        expect((err as PolarError).code).toBe("not_found");
        const dirs = await readdir(join(runRoot, nodeId));
        expect(dirs).toEqual([sandbox.id]);
      },
      T,
    );

    test(
      "Debian image: python3, git and the host's node mounted read-only",
      async () => {
        const node = Bun.which("node");
        expect(node).not.toBeNull();
        const debian = await runtime().create({
          spec: RuntimeSpec.parse({ image: BOOKWORM }),
          labels: { node_id: nodeId },
          mounts: [{ host: node as string, sandbox: `${SANDBOX_NODE_DIR}/bin/node`, readonly: true }],
        });
        try {
          const result = await debian.exec({
            command: `${SANDBOX_NODE_DIR}/bin/node -e 'console.log(process.version)' && python3 -c 'import pytest; print("py ok")' && git --version | cut -d' ' -f1`,
          });
          const hostVersion = (await Bun.$`${node as string} --version`.text()).trim();
          expect(result).toMatchObject({ exit_code: 0, stdout: `${hostVersion}\npy ok\ngit\n` });
          const write = await debian.exec({ command: `echo x > ${SANDBOX_NODE_DIR}/bin/node` });
          expect(write.exit_code).not.toBe(0);
        } finally {
          await debian.destroy();
        }
      },
      T,
    );
  });
}
