// Why: the rollout-API conformance tests run one suite against both services that serve the
// API — a standalone `polar node`, and a coordinator with a real node attached — each on port 0
// with its own SQLite files, the process runtime and the project's mock engine; and they read the
// callbacks a Python listener (stdlib http.server, as Python trainers write them) received.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockEngine, type MockEngineOptionsInput, type RunningMockEngine } from "../../node/mock-engine/index.ts";
import { BUNDLED_TASKS_FILE } from "../../node/api/task-catalog.ts";
import { startNode, type NodeParts, type RunningNode } from "../../node/main.ts";
import { parseNodeConfig, type NodeConfigInput } from "../../node/node-config.ts";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.ts";
import type { CoordinatorConfigInput } from "../../coordinator/config.ts";
import { TOKENS, waitFor } from "../support/coordinator/cluster.ts";
import { ADMIN_TOKEN } from "./node-stack.ts";
import { ROLLOUT_TOKEN } from "./rollout-fetch.ts";

export type TargetKind = "node" | "coordinator";

export interface RolloutTarget {
  kind: TargetKind;
  /** Where the rollout API is served. */
  url: string;
  node: RunningNode;
  coordinator: RunningCoordinator | undefined;
  engine: RunningMockEngine;
  dir: string;
  stop(): Promise<void>;
}

export interface TargetOptions {
  engine?: MockEngineOptionsInput;
  node?: Partial<NodeConfigInput>;
  coordinator?: Partial<CoordinatorConfigInput>;
  /** The directory of SQLite files (a restarted node reuses it). */
  dir?: string;
  /** The node's parts (extra sandbox mounts). */
  nodeParts?: NodeParts;
}

/** Every session makes one LLM call ("Done.") unless a test asks otherwise. */
const ONE_CALL = { steps: [{ text: "Done." }] };

export async function startTarget(kind: TargetKind, options: TargetOptions = {}): Promise<RolloutTarget> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), `polar-api-${kind}-`));
  const engine = await startMockEngine({ port: 0, tasks: BUNDLED_TASKS_FILE, successProbability: 0.5, script: ONE_CALL, ...options.engine });
  const coordinator =
    kind === "coordinator"
      ? await startCoordinator({
          port: 0,
          db: join(dir, "coordinator.db"),
          heartbeatMs: 200,
          nodeGraceMs: 2_000,
          tasks: BUNDLED_TASKS_FILE,
          ...TOKENS,
          ...options.coordinator,
        })
      : undefined;
  const node = await startNode(
    parseNodeConfig({
      admin_token: ADMIN_TOKEN,
      rollout_token: ROLLOUT_TOKEN,
      port: 0,
      db: join(dir, "node.db"),
      node_id: `api-${kind}-${process.pid}-${Date.now()}`,
      runtime: "process",
      engine: { urls: [engine.url] },
      workers: { init: 2, run: 2, postrun: 2, ready_backlog: 1 },
      sampling: { max_tokens_cap: 2048 },
      callback: { attempts: 3, base_delay_ms: 100 },
      ...(coordinator ? { coordinator: { url: coordinator.url, token: TOKENS.nodeToken } } : {}),
      ...options.node,
    }),
    options.nodeParts,
  );
  if (coordinator) {
    await waitFor(
      async () => {
        const res = await fetch(`${coordinator.url}/v1/admin/nodes`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } });
        const nodes = ((await res.json()) as { nodes: { status: string }[] }).nodes;
        return nodes.some((n) => n.status === "connected");
      },
      "the node connected",
      30_000,
    );
  }
  return {
    kind,
    url: coordinator?.url ?? node.url,
    node,
    coordinator,
    engine,
    dir,
    async stop() {
      await node.stop();
      await coordinator?.stop();
      await engine.stop();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CallbackRecord {
  task_id: string;
  status: string;
  results: number;
  group_id_types: string[];
  /** Set when the listener could not write its whole answer: the client dropped the connection. */
  write_error: string | null;
}

/** The Python listener (test/helpers/callback_listener.py): its URL and what it received. */
export class PythonCallbackListener {
  readonly records: CallbackRecord[] = [];
  private constructor(
    private readonly proc: Bun.Subprocess<"ignore", "pipe", "inherit">,
    readonly url: string,
  ) {}

  static async start(): Promise<PythonCallbackListener> {
    const proc = Bun.spawn(["python3", join(import.meta.dir, "callback_listener.py")], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
    const lines = readLines(proc.stdout);
    const first = await lines.next();
    const { port } = JSON.parse(first.value as string) as { port: number };
    const listener = new PythonCallbackListener(proc, `http://127.0.0.1:${port}/callback/task_result`);
    void (async () => {
      for await (const line of lines) listener.records.push(JSON.parse(line) as CallbackRecord);
    })();
    return listener;
  }

  stop(): void {
    this.proc.kill();
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
      yield buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
    }
  }
}
