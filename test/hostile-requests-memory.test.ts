// Issue 17 §2 against real processes: `polar node` and `polar coordinator` each take rounds of
// hostile rollout-API requests — num_samples 1e9, a 20 MB body, a body nested 100,000 deep, a
// 1 MB task id, a wrong token — and answer each in the API's JSON shape, stay healthy, create
// nothing, and come back to within 64 MiB of the resident memory they had before.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockEngine, type RunningMockEngine } from "../node/mock-engine/server.ts";
import { PolarProcesses, type Child } from "./helpers/polar-processes.ts";
import { rolloutFetch } from "./helpers/rollout-fetch.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";

const MiB = 1024 * 1024;
const processes = new PolarProcesses();
const dir = mkdtempSync(join(tmpdir(), "polar-hostile-"));
let engine: RunningMockEngine;
const services: { kind: string; url: string; child: Child }[] = [];

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line!.split(/\s+/)[1]) * 1024;
}

/** The URL `polar node` prints on stderr once it listens. */
async function nodeUrl(child: Child): Promise<string> {
  const reader = (child.stderr as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`polar node exited before listening:\n${text}`);
    text += decoder.decode(value, { stream: true });
    const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
    if (url) {
      reader.releaseLock();
      void (child.stderr as ReadableStream<Uint8Array>).pipeTo(new WritableStream());
      return url;
    }
  }
}

const task = (overrides: Record<string, unknown>) => ({
  task_id: "hostile",
  instruction: "i",
  agent: { harness: "mini" },
  evaluator: { strategy: "none" },
  ...overrides,
});

/** One round of hostile requests: each answered with its status and a JSON `detail`. */
async function hostileRound(url: string): Promise<void> {
  const submit = (body: string, init: RequestInit = {}) =>
    rolloutFetch(`${url}/rollout/task/submit`, { method: "POST", headers: { "content-type": "application/json" }, body, ...init });
  const cases: [string, () => Promise<Response>, number][] = [
    ["num_samples 1e9", () => submit(JSON.stringify(task({ num_samples: 1e9 }))), 422],
    ["a 20 MB body", () => submit(JSON.stringify(task({ metadata: { blob: "x".repeat(20 * MiB) } }))), 413],
    ["a body nested 100,000 deep", () => submit(`{"task_id":"deep","metadata":{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`), 422],
    ["a 1 MB task id", () => submit(JSON.stringify(task({ task_id: "t".repeat(MiB) }))), 422],
    [
      "a wrong token",
      () => submit(JSON.stringify(task({})), { headers: { "content-type": "application/json", authorization: "Bearer not-the-rollout-token" } }),
      401,
    ],
  ];
  for (const [what, send, status] of cases) {
    const res = await send();
    expect({ what, status: res.status }).toEqual({ what, status });
    expect((await res.json()) as object).toHaveProperty("detail");
  }
  expect((await fetch(`${url}/health`)).status).toBe(200);
}

beforeAll(async () => {
  engine = await startMockEngine({ port: 0 });
  const node = processes.spawn([
    "node",
    ...["--node-id", `hostile-${process.pid}`, "--port", "0", "--db", join(dir, "node.db"), "--runtime", "process", "--engine", engine.url, "--tasks", ""],
    ...["--admin-token", TOKENS.adminToken, "--rollout-token", TOKENS.rolloutToken],
  ]);
  services.push({ kind: "node", url: await nodeUrl(node), child: node });
  const coordinator = await processes.coordinator({ db: join(dir, "coordinator.db"), stderr: "pipe" });
  void (coordinator.child.stderr as ReadableStream<Uint8Array>).pipeTo(new WritableStream());
  services.push({ kind: "coordinator", ...coordinator });
}, 120_000);

afterAll(async () => {
  await processes.killAll();
  await engine?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("hostile rollout-API requests against running processes", () => {
  for (const kind of ["node", "coordinator"]) {
    test(`${kind}: refused in the API's shape, still healthy, nothing created, memory back within 64 MiB`, async () => {
      const service = services.find((s) => s.kind === kind)!;
      const pid = service.child.pid;
      await hostileRound(service.url); // the first round warms the code paths, not counted
      const before = rssBytes(pid);
      for (let round = 0; round < 5; round++) await hostileRound(service.url);
      expect(service.child.exitCode).toBeNull();
      for (const id of ["hostile", "deep"]) expect((await rolloutFetch(`${service.url}/rollout/task/${id}`)).status).toBe(404);
      await waitFor(() => rssBytes(pid) <= before + 64 * MiB, `${kind} RSS back within 64 MiB of ${Math.round(before / MiB)} MiB`, 60_000);
      console.error(`${kind}: RSS ${Math.round(before / MiB)} MiB before 5 rounds, ${Math.round(rssBytes(pid) / MiB)} MiB after`);
    }, 180_000);
  }
});
