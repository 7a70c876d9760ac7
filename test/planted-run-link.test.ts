// A sandbox that replaces its own folders with links to a host folder (issue 17 §3): a real node
// on each runtime this machine has (bwrap, Docker), the real mini harness and the mock engine; a
// task whose prepare step plants links to a host folder where the node used to unlink, bind and
// chmod the rollout's gateway socket or write job files, as root: /polar moved away and /polar/run
// and /polar/gateway made links (the sandbox then cannot run its own commands: the rollout fails,
// masked, naming the cause), or links inside the run folder (the rollout goes on and records its
// calls). Either way the host folder is untouched.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionResult } from "../protocol/rollout.ts";
import { SessionInfo } from "../protocol/sessions.ts";
import { ADMIN_TOKEN, pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";
import { sandboxRuntimes, type RuntimeCase } from "./helpers/sandbox-runtimes.ts";

const runtimes = await sandboxRuntimes();

/** Prepare commands that point the node's host-side paths at `host`, and how the rollout must end. */
const PLANTS = {
  // The parent of the run folder and the read-only mounts can be renamed (bwrap and Docker), then
  // links made in their place.
  "folders replaced by links": {
    outcome: "ERROR",
    command: (host: string) => `mv /polar /polar-moved && mkdir /polar && ln -s ${host} /polar/run && ln -s ${host} /polar/gateway`,
  },
  // The run folder stays; links inside it where the socket and the job folder used to be. The job
  // folder is replaced while the harness runs (once its bridge script is there), by a process that
  // outlives this step (Docker keeps it; bwrap ends it with the step's namespace), so the node's
  // next commands — the evaluator's — are the ones a followed link would send to the host.
  "links inside the run folder": {
    outcome: "COMPLETED",
    command: (host: string) =>
      [
        `ln -s ${host}/gateway.sock /polar/run/gateway.sock`,
        `ln -s ${host} /polar/run/state`,
        `setsid sh -c 'while [ ! -e /polar/run/bridge.mjs ]; do sleep 0.01; done; sleep 0.3; rm -rf /polar/run/.exec; mkdir -p ${host}; ln -s ${host} /polar/run/.exec' </dev/null >/dev/null 2>&1 &`,
        // The step's end kills its process group: give the planter time to leave it.
        "sleep 0.5",
      ].join("\n"),
  },
} as const;

/** The folder's entries (mode, content) and its own mtime, which any file created or removed in it moves. */
function snapshot(dir: string): { mtimeMs: number; entries: Record<string, { mode: number; text: string }> } {
  const entries = Object.fromEntries(
    readdirSync(dir).map((name) => [name, { mode: statSync(join(dir, name)).mode, text: readFileSync(join(dir, name), "utf8") }]),
  );
  return { mtimeMs: statSync(dir).mtimeMs, entries };
}

for (const runtime of runtimes) describe(`planted links on the ${runtime.name} runtime`, () => plantedLinks(runtime));

function plantedLinks(runtime: RuntimeCase): void {
  const name = runtime.name;
  if (!runtime.runtime) {
    test.skip(`${name} [SKIPPED: ${runtime.missing}]`, () => {});
    return;
  }
  let stack: NodeStack;
  let host: string;
  beforeAll(async () => {
    host = mkdtempSync(join(tmpdir(), "polar-victim-"));
    writeFileSync(join(host, "sentinel.txt"), "untouched\n");
    // Where a followed link would have the node unlink, bind and chmod the rollout's socket.
    writeFileSync(join(host, "gateway.sock"), "not a socket: the node must not remove me\n");
    stack = await startNodeStack({ runtime: name }, { runtime: runtime.runtime! });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(host, { recursive: true, force: true });
  });

  test.each(Object.entries(PLANTS))(
    "%s: the host folder is untouched; the rollout records its calls, or fails masked naming the cause",
    async (kind, plant) => {
      const before = snapshot(host);
      const taskId = `planted-${name}-${kind.replaceAll(" ", "-")}`;
      const submitted = await submit(stack.node.url, {
        task_id: taskId,
        instruction: "Write the word hello into out.txt, then say Done.",
        num_samples: 1,
        agent: { harness: "mini" },
        runtime: { ...runtime.spec, cap_add: [], workdir: "/work", prepare: [{ type: "exec", command: plant.command(host), cwd: "/" }] },
        evaluator: { strategy: "command", config: { sandbox: "agent", command: "cat out.txt", expected_output: "hello" } },
      });
      expect(submitted.status).toBe(200);
      const status = await pollTask(stack.node.url, taskId);
      const result = status.results[0] as SessionResult;

      // Nothing of the node's in the host folder: no socket, no job script, no state file; modes unchanged.
      expect(snapshot(host)).toEqual(before);

      expect(result.status).toBe(plant.outcome);
      if (result.status === "COMPLETED") {
        const sessionId = result.metadata.gateway_session_id as string;
        const info = SessionInfo.parse(
          await (await fetch(`${stack.node.url}/v1/sessions/${sessionId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json(),
        );
        expect(info.call_count).toBeGreaterThan(0);
        expect(result.trajectory.traces.length).toBeGreaterThan(0);
      } else {
        expect(result.trajectory.metadata.training_filter).toMatchObject({ masked: true });
        expect(result.trajectory.error ?? "").not.toBe("");
      }
      console.log(`${name}, ${kind}: ${result.status}${result.status === "COMPLETED" ? "" : ` — ${result.trajectory.error}`}`);
    },
    180_000,
  );
}
