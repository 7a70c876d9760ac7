// Why: `polar demo --cluster` — the whole system in one command, as real processes: a
// `polar coordinator`, two `polar node --coordinator` (process runtime) and, in this process, the
// mock engine's task-solving policy and a trainer on the trainer stream (the TypeScript client)
// submitting GRPO groups and moving the policy version as groups finish. It prints the dashboard
// URL and the admin token, follows the coordinator's /events for progress, ends with a table of
// the groups, and with --keep stays up for a look at the dashboard until Ctrl-C.
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { TrainerClient } from "../../clients/typescript/trainer-client.ts";
import { readFeed, type ParsedFrame } from "../../lib/event-feed.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import type { StreamedResult } from "../../protocol/trainer-stream.ts";
import { startMockEngine } from "../mock-engine/index.ts";
import { printGroupSummary, type DemoGroup } from "./cluster-summary.ts";

const POLAR = resolve(import.meta.dir, "../../bin/polar.ts");

export interface ClusterDemoOptions {
  harness: string;
  taskFile: string;
  groups: number;
  samples: number;
  dir: string;
  port: number;
  keep: boolean;
}

type Child = ReturnType<typeof Bun.spawn>;

function log(line: string): void {
  console.log(`polar demo: ${line}`);
}

const token = (who: string) => `demo-${who}-${randomBytes(12).toString("hex")}`;

/** Reads the first line a process prints on stdout (the coordinator's `listening` line). */
async function firstLine(child: Child): Promise<string> {
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the coordinator exited before it listened (see its log): ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n")[0]!;
}

export async function runClusterDemo(o: ClusterDemoOptions): Promise<void> {
  mkdirSync(o.dir, { recursive: true });
  const tokens = { node: token("node"), trainer: token("trainer"), admin: token("admin"), rollout: token("rollout") };
  const children: Child[] = [];
  const logFile = (name: string) => {
    const out = createWriteStream(join(o.dir, `${name}.log`));
    return (stream: ReadableStream<Uint8Array> | null) =>
      void (async () => {
        if (!stream) return;
        for await (const chunk of stream) out.write(chunk);
      })();
  };
  const spawn = (name: string, args: string[], env: Record<string, string> = {}, keepStdout = false): Child => {
    const child = Bun.spawn([process.execPath, POLAR, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
    const write = logFile(name);
    write(child.stderr as ReadableStream<Uint8Array>);
    if (!keepStdout) write(child.stdout as ReadableStream<Uint8Array>);
    children.push(child);
    return child;
  };

  const engine = await startMockEngine({ port: 0, tasks: o.taskFile, successProbability: 0.5 });
  let trainer: TrainerClient | undefined;
  const feedAbort = new AbortController();
  const stopAll = async () => {
    feedAbort.abort();
    trainer?.close();
    for (const c of children) c.kill("SIGTERM");
    await Promise.race([Promise.all(children.map((c) => c.exited)), Bun.sleep(15_000)]);
    for (const c of children) c.kill("SIGKILL");
    await engine.stop();
  };
  try {
    const coordinator = spawn(
      "coordinator",
      [
        "coordinator",
        "--port",
        String(o.port),
        "--db",
        join(o.dir, "coordinator.db"),
        "--tasks",
        o.taskFile,
        "--heartbeat-ms",
        "1000",
        "--node-token",
        tokens.node,
        "--trainer-token",
        tokens.trainer,
        "--admin-token",
        tokens.admin,
        "--rollout-token",
        tokens.rollout,
      ],
      {},
      true,
    );
    const url = (JSON.parse(await firstLine(coordinator)) as { url: string }).url;
    logFile("coordinator")(coordinator.stdout as ReadableStream<Uint8Array>);
    const nodeIds = ["demo-node-a", "demo-node-b"];
    for (const id of nodeIds) {
      spawn(
        id,
        [
          "node",
          "--node-id",
          id,
          "--port",
          "0",
          "--db",
          join(o.dir, `${id}.db`),
          "--runtime",
          "process",
          "--engine",
          engine.url,
          "--tasks",
          o.taskFile,
          "--coordinator",
          url,
          "--admin-token",
          tokens.admin,
          "--rollout-token",
          tokens.rollout,
          "--init-workers",
          "2",
          "--run-workers",
          "2",
          "--postrun-workers",
          "2",
          "--ready-backlog",
          "1",
          "--max-tokens-cap",
          "4096",
        ],
        { POLAR_NODE_TOKEN: tokens.node },
      );
    }
    const admin = async (path: string) =>
      (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${tokens.admin}` } })).json() as Promise<Record<string, unknown>>;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { nodes } = (await admin("/v1/admin/nodes")) as { nodes: { status: string }[] };
      if (nodes.filter((n) => n.status === "connected").length === nodeIds.length) break;
      if (Date.now() > deadline || children.some((c) => c.exitCode !== null)) throw new Error(`the nodes did not join within 120 s (logs in ${o.dir})`);
      await Bun.sleep(200);
    }
    log(
      `coordinator ${url} · nodes ${nodeIds.join(", ")} (process runtime) · mock engine ${engine.url} (task-solving policy, success 0.5) · logs and databases in ${o.dir}`,
    );
    log(`dashboard ${url}/`);
    log(`admin token ${tokens.admin}`);
    log(`rollout token ${tokens.rollout} (the rollout API, /rollout/*: Authorization: Bearer <token>)`);

    // Progress from the coordinator's own feed.
    const groups = new Map<string, DemoGroup>();
    const results: StreamedResult[] = [];
    let done = 0;
    const feed = await fetch(`${url}/events`, { headers: { authorization: `Bearer ${tokens.admin}` }, signal: feedAbort.signal });
    void readFeed(feed.body!, (f: ParsedFrame) => {
      if (f.type === "task.updated") log(`group ${f.data.group_id} (${f.data.task_id}): ${f.data.completed_sessions}/${f.data.total_sessions} done`);
      else if (f.type === "rollout.requeued") log(`requeued ${(f.data.rollout_ids as string[]).length} rollout(s): ${f.data.cause}`);
    }).catch(() => undefined);

    let version = 0;
    let submitNext: () => Promise<void> = async () => {};
    trainer = new TrainerClient({
      url,
      token: tokens.trainer,
      trainerId: "demo-trainer",
      onResult: (r) => void results.push(r),
      onGroup: (g) => {
        const group = groups.get(g.group_id);
        if (group) group.advantages = group.rollout_ids.map((id) => g.advantages[g.rollout_ids.indexOf(id)] ?? null);
        done++;
        // A weight sync after each finished group: the next group starts at a newer version, and those in flight fall behind.
        version++;
        trainer!.policy(version);
        log(`group ${g.group_id} finished (${done}/${o.groups}); policy version → ${version}`);
        void submitNext();
      },
    });
    await trainer.ready();
    const tasks = mixed((await loadTaskFile(o.taskFile)).tasks.map((t) => t.task_id));
    const t0 = performance.now();
    let submitted = 0;
    // Two groups in flight at a time, the next one submitted as one finishes (as an async GRPO trainer does).
    submitNext = async () => {
      if (submitted >= o.groups) return;
      const taskId = tasks[submitted++ % tasks.length]!;
      const { group_id, rollout_ids } = await trainer!.submit({ task: taskId, n: o.samples, agent: { harness: o.harness }, advantages: "mean_std" });
      groups.set(group_id, { group_id, task_id: taskId, rollout_ids, advantages: [] });
      log(`trainer submitted group ${group_id}: ${taskId} × ${o.samples} (policy version ${version})`);
    };
    await submitNext();
    await submitNext();
    while (done < o.groups) {
      if (children.some((c) => c.exitCode !== null)) throw new Error(`a Polar process exited early (logs in ${o.dir})`);
      await Bun.sleep(250);
    }
    printGroupSummary([...groups.values()], results);
    log(`${results.length} results in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const failed = results.filter((r) => r.status !== "COMPLETED");
    if (failed.length > 0) throw new Error(`${failed.length} rollout(s) did not complete: ${failed.map((r) => r.error).join("; ")}`);
    if (o.keep) {
      log(`done; still running for the dashboard at ${url}/ (admin token ${tokens.admin}) — Ctrl-C stops everything`);
      await new Promise<void>((resolveStop) => {
        process.once("SIGINT", () => resolveStop());
        process.once("SIGTERM", () => resolveStop());
      });
    } else {
      log("done");
    }
  } finally {
    await stopAll();
  }
}

/** Task ids alternating between id prefixes (`py-`, `js-`), so a few groups cover both kinds. */
function mixed(ids: string[]): string[] {
  const byPrefix = new Map<string, string[]>();
  for (const id of ids) byPrefix.set(id.split("-")[0]!, [...(byPrefix.get(id.split("-")[0]!) ?? []), id]);
  const lists = [...byPrefix.values()];
  const out: string[] = [];
  for (let i = 0; out.length < ids.length; i++) for (const list of lists) if (list[i]) out.push(list[i]!);
  return out;
}
