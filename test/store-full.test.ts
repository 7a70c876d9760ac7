// A full disk is an error, not a crash (issue 17 §3), on a running node whose store lives on a
// small tmpfs: a rollout is held in RUN (its command waits for a gate file), the tmpfs is filled,
// the gate opens and the rollout's 2 MB result cannot be stored. That rollout ends as a masked
// infrastructure failure naming SQLITE_FULL; the node stays up, answers /health 503 and refuses
// new tasks (503) while writes fail, logs ids and SQLite's words only (no payload, no query), and
// is healthy again — and runs a task to the end — once the space is back.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNode } from "../node/main.ts";
import { commandTask, describeOnTmpfs, fill } from "./helpers/full-disk.ts";
import { pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";

const T = 180_000;
/** The tmpfs the node's store lives on. */
const TMPFS_MB = 24;
/** What the held rollout prints: its result is bigger than any slack left in the store's files. */
const PAYLOAD_BYTES = 2_000_000;

const base = realpathSync(mkdtempSync(join(tmpdir(), "polar-store-full-")));
const storeDir = join(base, "store");
const gate = join(base, "gate");
const filler = join(storeDir, "filler");

/** Everything the node wrote to the console meanwhile. */
const logged: string[] = [];
const original = console.error;

const describeFull = describeOnTmpfs("a full disk on a running node");

describeFull("a running node whose store's disk fills up", () => {
  let stack: NodeStack;

  beforeAll(async () => {
    mkdirSync(storeDir);
    mkdirSync(gate);
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_MB}m`, "tmpfs", storeDir]);
    console.error = (...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
      original(...args);
    };
    stack = await startNodeStack({ db: join(storeDir, "node.db"), tasks: "" }, { mounts: [{ host: gate, sandbox: "/gate", readonly: true }] });
  }, T);

  afterAll(async () => {
    console.error = original;
    await stack?.stop();
    // Lazily, should anything still hold a file there: the mount never outlives the test.
    execFileSync("umount", ["-l", storeDir]);
    rmSync(base, { recursive: true, force: true });
  }, T);

  test(
    "the rollout that met SQLITE_FULL fails masked, the node stays up and unhealthy, and recovers when space returns",
    async () => {
      const url = stack.node.url;
      // A first task runs normally (the store's files exist and have grown a little).
      expect((await submit(url, commandTask("before", "echo ok"))).status).toBe(200);
      expect((await pollTask(url, "before")).results[0]!.status).toBe("COMPLETED");

      const held = `until [ -e /gate/open ]; do sleep 0.05; done; head -c ${PAYLOAD_BYTES} /dev/zero | tr '\\0' q`;
      expect((await submit(url, commandTask("held", held))).status).toBe(200);
      const running = async () => stack.node.pipeline.liveRollouts().some((r) => r.taskId === "held" && r.state === "RUN");
      for (let i = 0; !(await running()); i++) {
        if (i > 1200) throw new Error("the held rollout never reached RUN");
        await Bun.sleep(50);
      }
      const filled = fill(filler);
      expect(filled).toBeGreaterThan(0);
      writeFileSync(join(gate, "open"), "");

      const status = await pollTask(url, "held");
      const result = status.results[0]!;
      expect(result.status).toBe("ERROR");
      expect(result.error).toBe("store: the node's store refused a write: SQLITE_FULL: database or disk is full");
      const failure = result.trajectory.metadata.failure as { cause: string };
      expect(failure.cause).toBe("store");
      expect(result.trajectory.traces.every((t) => t.loss_mask.every((m) => m === 0))).toBe(true);

      // Up, unhealthy while writes fail, and refusing new work in the rollout API's shape.
      const unhealthy = await fetch(`${url}/health`);
      expect(unhealthy.status).toBe(503);
      expect(await unhealthy.json()).toMatchObject({
        status: "unhealthy",
        draining: true,
        store: { writable: false, error: expect.stringMatching(/^SQLITE_FULL: /) },
      });
      const refused = await submit(url, commandTask("while-full", "echo ok"));
      expect(refused.status).toBe(503);
      expect(refused.json.detail).toMatch(/store cannot write \(SQLITE_FULL: /);

      // Logs carry ids and SQLite's words, never the payload or the query with its parameters.
      expect(logged.some((l) => l.includes("store.write_failed") && l.includes("SQLITE_FULL"))).toBe(true);
      for (const line of logged) {
        expect(line.includes("qqqqqqqqqqqqqqqq")).toBe(false);
        expect(line.includes("Failed query")).toBe(false);
        expect(line.length).toBeLessThan(4_000);
      }

      // Space returns: healthy again within the probe's interval, and a task runs to the end.
      rmSync(filler);
      for (let i = 0; (await fetch(`${url}/health`)).status !== 200; i++) {
        if (i > 300) throw new Error("the node never reported healthy again");
        await Bun.sleep(50);
      }
      expect((await submit(url, commandTask("after", "echo ok"))).status).toBe(200);
      expect((await pollTask(url, "after")).results[0]!.status).toBe("COMPLETED");

      // Nothing was lost: what could not be stored while the disk was full was stored once it could
      // be — a restarted node on the same store reads the held task and its masked result.
      const before = (await pollTask(url, "held")).results;
      const config = stack.node.config;
      await stack.node.stop();
      stack.node = await startNode(config, { mounts: [{ host: gate, sandbox: "/gate", readonly: true }] });
      const reread = await pollTask(stack.node.url, "held");
      expect(reread.status).toBe("completed");
      expect(reread.results).toEqual(before);
      expect((await fetch(`${stack.node.url}/health`)).status).toBe(200);
    },
    T,
  );

  test(
    "an LLM call the store could not record fails its rollout as the store's, though the harness exits 0 once space is back",
    async () => {
      const url = stack.node.url;
      // The harness waits, sends the gateway one call whose record needs more room than is left,
      // then waits again — until space is back, so its own result can be stored.
      // Python (which the node's set-up installs; curl may be absent) through the sandbox's gateway URL.
      const python = [
        "import json, os, time, urllib.request",
        "def wait(path):",
        "    while not os.path.exists(path): time.sleep(0.05)",
        'wait("/gate/call")',
        `body = json.dumps({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "q" * ${PAYLOAD_BYTES / 4}}]}).encode()`,
        'headers = {"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"}',
        "try:",
        '    urllib.request.urlopen(urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body, headers=headers)).read()',
        "except Exception as err:",
        "    print(err)",
        'wait("/gate/finish")',
      ].join("\n");
      const seen = logged.length;
      const failures = () =>
        logged
          .slice(seen)
          .filter((l) => l.includes("store.write_failed"))
          .map((l) => JSON.parse(l) as { what: string; code: string });
      expect((await submit(url, commandTask("calling", "", ["python3", "-c", python]))).status).toBe(200);
      const running = async () => stack.node.pipeline.liveRollouts().some((r) => r.taskId === "calling" && r.state === "RUN");
      for (let i = 0; !(await running()); i++) {
        if (i > 1200) throw new Error("the calling rollout never reached RUN");
        await Bun.sleep(50);
      }
      fill(filler);
      writeFileSync(join(gate, "call"), "");
      for (let i = 0; failures().length === 0; i++) {
        if (i > 1200) throw new Error("the call's record never failed");
        await Bun.sleep(50);
      }
      expect(failures()[0]).toMatchObject({ what: "recording an LLM call", code: "SQLITE_FULL" });
      rmSync(filler);
      for (let i = 0; (await fetch(`${url}/health`)).status !== 200; i++) {
        if (i > 300) throw new Error("the node never reported healthy again");
        await Bun.sleep(50);
      }
      writeFileSync(join(gate, "finish"), "");
      const result = (await pollTask(url, "calling")).results[0]!;
      // Its result was stored (the disk had room again), and it is the store's failure, masked.
      expect(failures()).toHaveLength(1);
      expect(result.status).toBe("ERROR");
      expect((result.trajectory.metadata.failure as { cause: string }).cause).toBe("store");
      expect(result.error).toBe(
        "store: the node's store refused a write while this rollout ran: SQLITE_FULL: database or disk is full (recording an LLM call)",
      );
    },
    T,
  );
});
