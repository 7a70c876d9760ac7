// A full disk under the coordinator's store costs no result (issue 16's "nothing lost on failure",
// the coordinator's side of test/store-full.test.ts): its store lives on a small tmpfs, a task's
// two rollouts are held in RUN on a real node (their command waits for a gate file), the tmpfs is
// filled and the gate opens, so neither 300 KB result can be stored. The coordinator stays up,
// answers /health 503 naming SQLITE_FULL, refuses new tasks (503) and keeps the node's results
// unacknowledged; once space is back it stores them, the task completes with both, and new tasks
// run again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TOKENS } from "./support/coordinator/cluster.ts";
import { commandTask, describeOnTmpfs, fill } from "./helpers/full-disk.ts";
import { pollTask, submit } from "./helpers/node-stack.ts";
import { startTarget, type RolloutTarget } from "./helpers/rollout-targets.ts";

const T = 180_000;
const TMPFS_MB = 24;
const PAYLOAD_BYTES = 300_000;

const base = realpathSync(mkdtempSync(join(tmpdir(), "polar-coordinator-full-")));
const storeDir = join(base, "store");
const gate = join(base, "gate");
const filler = join(storeDir, "filler");
const logged: string[] = [];
const original = console.error;
const originalWrite = process.stderr.write.bind(process.stderr);

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  for (const t0 = Date.now(); !(await check()); await Bun.sleep(50)) if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
}

const describeFull = describeOnTmpfs("a full disk under the coordinator");

describeFull("a coordinator whose store's disk fills up", () => {
  let target: RolloutTarget;

  beforeAll(async () => {
    mkdirSync(storeDir);
    mkdirSync(gate);
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_MB}m`, "tmpfs", storeDir]);
    console.error = (...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
      original(...args);
    };
    // The coordinator's structured log lines go to stderr directly.
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      logged.push(String(chunk));
      return originalWrite(chunk, ...rest);
    }) as typeof process.stderr.write;
    target = await startTarget("coordinator", {
      dir: base,
      coordinator: { db: join(storeDir, "coordinator.db") },
      nodeParts: { mounts: [{ host: gate, sandbox: "/gate", readonly: true }] },
    });
  }, T);

  afterAll(async () => {
    console.error = original;
    process.stderr.write = originalWrite;
    rmSync(filler, { force: true });
    await target?.stop();
    execFileSync("umount", ["-l", storeDir]);
    rmSync(base, { recursive: true, force: true });
  }, T);

  test(
    "results the store refused are kept unacknowledged and stored once space is back; new tasks wait with 503",
    async () => {
      const url = target.url;
      const admin = { authorization: `Bearer ${TOKENS.adminToken}` };
      expect((await submit(url, commandTask("before", "echo ok"))).status).toBe(200);
      expect((await pollTask(url, "before")).results[0]!.status).toBe("COMPLETED");

      const held = `until [ -e /gate/open ]; do sleep 0.05; done; head -c ${PAYLOAD_BYTES} /dev/zero | tr '\\0' q`;
      expect((await submit(url, commandTask("held", held, undefined, 2))).status).toBe(200);
      await until("both held rollouts in RUN", async () => {
        const { rollouts } = (await (await fetch(`${url}/v1/admin/rollouts`, { headers: admin })).json()) as { rollouts: { stage: string | null }[] };
        return rollouts.filter((r) => r.stage === "RUN").length === 2;
      });
      expect(fill(filler)).toBeGreaterThan(0);
      writeFileSync(join(gate, "open"), "");

      // The results reach the coordinator, which cannot store them: up, unhealthy, naming the cause.
      await until("the coordinator reports its store failing", async () => (await fetch(`${url}/health`)).status === 503);
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({
        ok: false,
        store: { writable: false, error: expect.stringMatching(/^SQLITE_FULL: /) },
      });
      expect(logged.some((l) => l.includes('"store.write_failed"') && l.includes("SQLITE_FULL"))).toBe(true);
      const refused = await submit(url, commandTask("while-full", "echo ok"));
      expect(refused.status).toBe(503);
      expect(refused.json.detail).toMatch(/coordinator's store cannot write \(SQLITE_FULL: /);
      const meanwhile = (await (await fetch(`${url}/rollout/task/held`, { headers: { authorization: `Bearer ${TOKENS.rolloutToken}` } })).json()) as {
        status: string;
        results: unknown[];
      };
      expect(meanwhile).toMatchObject({ status: "running", results: [] });
      for (const line of logged) expect(line.includes("qqqqqqqqqqqqqqqq")).toBe(false);

      // Space returns: the retried writes go through, both results are stored and the task completes.
      rmSync(filler);
      const done = await pollTask(url, "held");
      expect(done.status).toBe("completed");
      expect(done.results.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED"]);
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ ok: true, store: { writable: true } });
      expect(logged.some((l) => l.includes('"store.writable_again"'))).toBe(true);
      expect((await submit(url, commandTask("after", "echo ok"))).status).toBe(200);
      expect((await pollTask(url, "after")).results[0]!.status).toBe("COMPLETED");
    },
    T,
  );
});
