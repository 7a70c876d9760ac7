// The prewarm pool over the real Docker runtime: targets follow demand, warm hand-outs, never
// reused, a container killed from outside is noticed (at hand-out and in the background) and
// replaced, the cap on concurrent starts holds, close destroys everything.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { containerName } from "./docker/docker-config.ts";
import { BUSYBOX, containersOf, dockerForTests, expectNoContainers, testNodeId } from "../../test/support/runtime/docker-test-env.ts";
import { createDockerRuntime } from "./docker/docker.ts";
import { createSandboxPool, poolKey, type PoolOptions } from "./pool.ts";
import { RuntimeSpec, type PoolEvent, type SandboxRuntime } from "./types.ts";

const docker = await dockerForTests("sandbox pool");
const T = 120_000;
const SPEC = RuntimeSpec.parse({ image: BUSYBOX });
const KEY = poolKey(SPEC);

/** Resolves with the first event matching `match` (events before the call are not seen). */
function nextEvent(pool: { onEvent(l: (e: PoolEvent) => void): () => void }, match: (e: PoolEvent) => boolean): Promise<PoolEvent> {
  return new Promise((resolve) => {
    const off = pool.onEvent((e) => {
      if (match(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/** Ids of the sandboxes the pool starts from now on, in order. */
function startedIds(pool: { onEvent(l: (e: PoolEvent) => void): () => void }): string[] {
  const ids: string[] = [];
  pool.onEvent((e) => e.type === "started" && ids.push(e.sandbox_id));
  return ids;
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await Bun.sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

if (docker) {
  describe("sandbox pool", () => {
    const nodeId = testNodeId("pool");
    let runRoot: string;
    let runtime: SandboxRuntime;
    const pools: ReturnType<typeof createSandboxPool>[] = [];
    const makePool = (options: Partial<PoolOptions> = {}) => {
      const pool = createSandboxPool({ runtime, nodeId, healthCheckMs: 0, ...options });
      pools.push(pool);
      return pool;
    };

    beforeAll(async () => {
      runRoot = await mkdtemp(join(tmpdir(), "polar-pool-test-"));
      runtime = createDockerRuntime({ docker, runRoot });
    });

    afterAll(async () => {
      await Promise.all(pools.map((p) => p.close()));
      await expectNoContainers(docker, nodeId);
      await rm(runRoot, { recursive: true, force: true });
    }, T);

    test("keys: equal specs share a key, prepare does not count, options do", () => {
      const withPrepare = RuntimeSpec.parse({ image: BUSYBOX, prepare: [{ type: "exec", command: "true" }] });
      expect(poolKey(withPrepare)).toBe(KEY);
      expect(poolKey(RuntimeSpec.parse({ image: BUSYBOX, env: { A: "1" } }))).not.toBe(KEY);
      expect(poolKey(RuntimeSpec.parse({ image: BUSYBOX, env: { A: "1", B: "2" } }))).toBe(
        poolKey(RuntimeSpec.parse({ image: BUSYBOX, env: { B: "2", A: "1" } })),
      );
      expect(KEY.startsWith(`${BUSYBOX}#`)).toBe(true);
      expect(poolKey(withPrepare, true)).not.toBe(poolKey(SPEC, true));
    });

    test(
      "prepareInPool: hand-outs are already prepared; a failing prepare is a failed start",
      async () => {
        const pool = makePool({ prepareInPool: true, retryDelayMs: 60_000 });
        const task = RuntimeSpec.parse({
          image: BUSYBOX,
          prepare: [
            { type: "upload_file", path: "repo/README", content: "task files" },
            { type: "exec", command: "echo prepared > repo/STATE" },
          ],
        });
        pool.setDemand(task, 1);
        await waitFor(() => pool.warm()[poolKey(task, true)] === 1, "one prepared sandbox");
        const sandbox = await pool.take(task, { rollout_id: "r-p" });
        expect((await sandbox.exec({ command: "cat repo/README repo/STATE" })).stdout).toBe("task filesprepared\n");
        await pool.release(sandbox);

        const broken = RuntimeSpec.parse({ image: BUSYBOX, prepare: [{ type: "exec", command: "exit 3" }] });
        const failed = nextEvent(pool, (e) => e.type === "failed");
        const started = startedIds(pool);
        pool.setDemand(broken, 1);
        expect(await failed).toMatchObject({ key: poolKey(broken, true) });
        expect(started).toEqual([]);
        expect(pool.warm()[poolKey(broken, true)]).toBe(0);
        await pool.close();
        await expectNoContainers(docker, nodeId);
      },
      T,
    );

    test(
      "demand fills the pool; take hands out a warm sandbox once; release destroys it",
      async () => {
        const pool = makePool();
        const events: PoolEvent[] = [];
        pool.onEvent((e) => events.push(e));
        pool.setDemand(SPEC, 2);
        await waitFor(() => pool.warm()[KEY] === 2, "two ready sandboxes");
        expect(events.filter((e) => e.type === "started").length).toBe(2);

        const first = await pool.take(SPEC, { rollout_id: "r-1" });
        const taken = events.find((e) => e.type === "taken");
        expect(taken).toMatchObject({ type: "taken", key: KEY, sandbox_id: first.id, warm: true });
        expect((await first.exec({ command: "echo warm" })).stdout).toBe("warm\n");
        // Demand went 2 → 1 with the take: the pool keeps one ready, not two.
        expect(pool.warm()[KEY]).toBe(1);

        const second = await pool.take(SPEC, { rollout_id: "r-2" });
        expect(second.id).not.toBe(first.id);
        await pool.release(first);
        expect(await first.alive()).toBe(false);
        expect(events.find((e) => e.type === "destroyed" && e.sandbox_id === first.id)).toMatchObject({ reason: "released" });

        // Nothing queued, nothing ready: the next take starts one (cold) and never returns a used one.
        const third = await pool.take(SPEC, { rollout_id: "r-3" });
        expect(events.filter((e) => e.type === "taken").at(-1)).toMatchObject({ sandbox_id: third.id, warm: false });
        expect([first.id, second.id]).not.toContain(third.id);
        const labels = (await docker.getContainer(containerName(third.id)).inspect()).Config.Labels;
        expect(labels["polar.rollout_id"]).toBe("r-3");
        await pool.close();
        expect(await second.alive()).toBe(false);
        expect(await third.alive()).toBe(false);
      },
      T,
    );

    test(
      "a ready sandbox killed from outside is never handed out; it is destroyed and replaced",
      async () => {
        const pool = makePool();
        const started = startedIds(pool);
        pool.setDemand(SPEC, 2);
        await waitFor(() => pool.warm()[KEY] === 2, "two ready sandboxes");
        const victimStarted = started[0] as string;
        await docker.getContainer(containerName(victimStarted)).kill();

        const destroyed = nextEvent(pool, (e) => e.type === "destroyed" && e.sandbox_id === victimStarted);
        // Two takes pass the victim whichever place it has in the ready list.
        const a = await pool.take(SPEC, { rollout_id: "r-k1" });
        const b = await pool.take(SPEC, { rollout_id: "r-k2" });
        expect([a.id, b.id]).not.toContain(victimStarted);
        expect(await a.alive()).toBe(true);
        expect(await b.alive()).toBe(true);
        expect(await destroyed).toMatchObject({ reason: "dead" });
        // Demand is back to 0 after two takes; a new demand refills with live sandboxes.
        pool.setDemand(SPEC, 1);
        await waitFor(() => pool.warm()[KEY] === 1, "a replacement");
        await pool.close();
      },
      T,
    );

    test(
      "the background check notices a killed sandbox and replaces it without a take",
      async () => {
        const pool = makePool({ healthCheckMs: 200 });
        const started = startedIds(pool);
        pool.setDemand(SPEC, 1);
        await waitFor(() => pool.warm()[KEY] === 1, "one ready sandbox");
        const victim = started[0] as string;
        const destroyed = nextEvent(pool, (e) => e.type === "destroyed" && e.sandbox_id === victim);
        const replaced = nextEvent(pool, (e) => e.type === "started");
        await docker.getContainer(containerName(victim)).kill();
        expect(await destroyed).toMatchObject({ reason: "dead" });
        const replacement = await replaced;
        expect(replacement.type === "started" && replacement.sandbox_id !== victim).toBe(true);
        await pool.close();
      },
      T,
    );

    test(
      "the cap on concurrent starts holds; lower demand destroys the surplus",
      async () => {
        let running = 0;
        let most = 0;
        const counting: SandboxRuntime = {
          ...runtime,
          create: async (options) => {
            most = Math.max(most, ++running);
            try {
              return await runtime.create(options);
            } finally {
              running--;
            }
          },
        };
        const pool = createSandboxPool({ runtime: counting, nodeId, healthCheckMs: 0, maxConcurrentStarts: 1, maxReadyPerKey: 3 });
        pools.push(pool);
        pool.setDemand(SPEC, 10); // capped at 3
        await waitFor(() => pool.warm()[KEY] === 3, "three ready sandboxes");
        expect(most).toBe(1);
        expect((await containersOf(docker, nodeId)).length).toBe(3);

        const surplus: PoolEvent[] = [];
        pool.onEvent((e) => e.type === "destroyed" && surplus.push(e));
        pool.setDemand(SPEC, 1);
        await waitFor(() => surplus.length === 2, "two surplus sandboxes destroyed");
        expect(surplus.every((e) => e.type === "destroyed" && e.reason === "surplus")).toBe(true);
        expect(pool.warm()[KEY]).toBe(1);
        await pool.close();
        await expectNoContainers(docker, nodeId);
      },
      T,
    );

    test(
      "a failing image reports failed events and does not spin",
      async () => {
        const bad = RuntimeSpec.parse({ image: "polar-no-such-image:never" });
        const pool = makePool({ retryDelayMs: 60_000 });
        const failures: PoolEvent[] = [];
        pool.onEvent((e) => e.type === "failed" && failures.push(e));
        const failed = nextEvent(pool, (e) => e.type === "failed");
        pool.setDemand(bad, 2);
        expect(await failed).toMatchObject({ type: "failed", key: poolKey(bad) });
        await Bun.sleep(300);
        expect(pool.warm()[poolKey(bad)]).toBe(0);
        // The two starts of the first round failed; the next round waits for the retry delay.
        expect(failures.length).toBeLessThanOrEqual(2);
        await pool.close();
      },
      T,
    );
  });
}
