// Why: `polar generate` is offline data generation as a first-class job: a node started in this
// process (gateway, sandbox pool, pipeline, evaluation, as `polar demo` starts one) is driven
// through Polar's rollout API — each task submitted for the samples the output folder still
// lacks, a bounded window of them at a time — against any OpenAI- or Anthropic-compatible
// endpoint or the mock engine; every finished rollout becomes an attempt (rows of both views,
// accepted by the --accept rule, optionally deduplicated) recorded so a restart resumes it.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SessionCalls, type RecordedCall } from "../../protocol/calls.ts";
import type { GeneratedTrace, GenerateSettings, GenerateSummary } from "../../protocol/generate.ts";
import { harnessKind, type HarnessKind } from "../../protocol/harness-names.ts";
import { TaskStatus, type SessionResult } from "../../protocol/rollout.ts";
import type { RuntimeBackend } from "../../protocol/runtime.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import { PolarError } from "../../protocol/errors.ts";
import { createBackend, type BackendKind } from "../gateway/backends/index.ts";
import { pinnedBinary, pinnedVersion, type PinnedCli } from "../harness/common.ts";
import { startMockEngine, type RunningMockEngine } from "../mock-engine/index.ts";
import { startNode, type RunningNode } from "../main.ts";
import { parseNodeConfig } from "../node-config.ts";
import { parseAccept } from "./accept.ts";
import { assistantText, buildAttempt, type AttemptContext } from "./attempt.ts";
import { NearDuplicates } from "./dedup.ts";
import { GenerateOutput } from "./output.ts";
import { Progress, summarize } from "./progress.ts";

export const MOCK_ENGINE = "mock";
/** The mock engine's context is 40960 tokens; harnesses ask for up to 32000 output tokens. */
const MOCK_MAX_TOKENS_CAP = 4096;
const POLL_MS = 500;
/** Results that say the rollout was interrupted, not finished: they are run again on resume. */
const INTERRUPTED = new Set(["cancelled", "shutdown", "node_restarted"]);
const PACKAGE_VERSION = (JSON.parse(readFileSync(resolve(import.meta.dir, "../../package.json"), "utf8")) as { version: string }).version;
const PINNED: Partial<Record<HarnessKind, PinnedCli>> = { codex: "codex", "claude-code": "claude-code", "qwen-code": "qwen-code", pi: "pi" };

export interface GenerateOptions {
  tasksFile: string;
  harness: string;
  samples: number;
  /** Base URL of an OpenAI- / Anthropic-compatible endpoint, vLLM or SGLang, or "mock". */
  engine: string;
  backend: BackendKind;
  model?: string;
  apiKey?: string;
  accept: string;
  out: string;
  runtime: RuntimeBackend;
  /** Harnesses running at once. */
  concurrency: number;
  /** Jaccard threshold for near-duplicate accepted attempts of a task; null: keep all. */
  dedup: number | null;
  only?: string[];
  maxTokensCap?: number;
  temperature?: number;
  timeoutSeconds: number;
  /** The mock engine's policy when engine is "mock". */
  mock?: { successProbability: number; seed: number };
  signal?: AbortSignal;
  log?: (line: string) => void;
  progress?: { write: (text: string) => void; tty: boolean };
}

interface Pending {
  taskId: string;
  /** Output sample index of the node's sample i. */
  samples: number[];
  seen: Set<string>;
  submitted: boolean;
  finished: boolean;
}

function harnessVersion(kind: HarnessKind): string | null {
  if (kind === "mini") return `polar ${PACKAGE_VERSION}`;
  const cli = PINNED[kind];
  return cli ? pinnedVersion(cli).version : null;
}

async function pickModel(options: GenerateOptions, url: string): Promise<string> {
  if (options.model) return options.model;
  const models = await createBackend(options.backend, {
    urls: [url],
    retries: 0,
    timeoutMs: 30_000,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  }).listModels();
  if (models.length === 1) return models[0]!;
  throw new PolarError(
    "bad_request",
    models.length === 0
      ? `${url} lists no models: name one with --model`
      : `${url} serves ${models.length} models (${models.slice(0, 5).join(", ")}${models.length > 5 ? ", …" : ""}): name one with --model`,
  );
}

export async function runGenerate(options: GenerateOptions): Promise<GenerateSummary> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.error(`polar generate: ${line}`));
  const rule = parseAccept(options.accept);
  const kind = harnessKind(options.harness);
  if (!kind) throw new PolarError("bad_request", `unknown harness "${options.harness}"`);
  const cli = PINNED[kind];
  if (cli && !existsSync(pinnedBinary(cli)))
    throw new PolarError("bad_request", `the ${kind} CLI is not installed (${pinnedBinary(cli)}); run scripts/install-harnesses.sh`);
  const tasksFile = resolve(options.tasksFile);
  const loaded = await loadTaskFile(tasksFile);
  if (loaded.issues.length > 0)
    throw new PolarError("bad_request", `${tasksFile}: ${loaded.issues.map((i) => `line ${i.line}${i.field ? ` ${i.field}` : ""}: ${i.message}`).join("; ")}`);
  const unknown = (options.only ?? []).filter((id) => !loaded.tasks.some((t) => t.task_id === id));
  if (unknown.length > 0) throw new PolarError("bad_request", `--only: no task ${unknown.join(", ")} in ${tasksFile}`);
  const taskIds = loaded.tasks.map((t) => t.task_id).filter((id) => !options.only || options.only.includes(id));

  let engine: RunningMockEngine | undefined;
  let node: RunningNode | undefined;
  let output: GenerateOutput | undefined;
  const nodeDir = mkdtempSync(join(tmpdir(), "polar-generate-"));
  try {
    if (options.engine === MOCK_ENGINE) {
      engine = await startMockEngine({ port: 0, tasks: tasksFile, successProbability: options.mock?.successProbability ?? 0.5, seed: options.mock?.seed ?? 0 });
    }
    const engineUrl = engine?.url ?? options.engine;
    const model = await pickModel(options, engineUrl);
    const ctx: AttemptContext = { harness: { name: kind, version: harnessVersion(kind) }, model, backend: options.backend };
    const settings: GenerateSettings = {
      tasks_file: tasksFile,
      tasks_sha256: createHash("sha256").update(readFileSync(tasksFile)).digest("hex"),
      harness: kind,
      model,
      backend: options.backend,
      engine: options.engine === MOCK_ENGINE ? MOCK_ENGINE : options.engine,
      accept: rule.source,
      dedup: options.dedup,
    };
    const dedup = options.dedup === null ? undefined : new NearDuplicates(options.dedup);
    const keptRows = new Map<string, { taskId: string; sample: number; rows: GeneratedTrace[] }>();
    output = GenerateOutput.open(options.out, settings, (row) => {
      const k = `${row.task_id}\u0000${row.sample_index}`;
      keptRows.set(k, { taskId: row.task_id, sample: row.sample_index, rows: [...(keptRows.get(k)?.rows ?? []), row] });
    });
    for (const kept of keptRows.values()) dedup?.keep(kept.taskId, kept.sample, assistantText(kept.rows));
    const selected = new Set(taskIds);
    const ours = () => output!.attempts.filter((a) => selected.has(a.task_id) && a.sample_index < options.samples);
    const resumed = ours().length;
    const pending: Pending[] = taskIds.flatMap((taskId) => {
      const samples = Array.from({ length: options.samples }, (_, i) => i).filter((i) => !output!.isDone(taskId, i));
      return samples.length > 0 ? [{ taskId, samples, seen: new Set<string>(), submitted: false, finished: false }] : [];
    });
    const total = taskIds.length * options.samples;
    const progress = new Progress(total, ours(), options.progress?.write, options.progress?.tty);
    const todo = pending.reduce((n, p) => n + p.samples.length, 0);
    log(
      `${taskIds.length} tasks × ${options.samples} samples, ${todo} to run${resumed ? ` (${resumed} attempts already in ${options.out})` : ""} · harness ${kind} · ${options.backend} ${options.engine === MOCK_ENGINE ? `mock engine ${engineUrl}` : engineUrl} · model ${model} · accept ${rule.source}`,
    );

    if (todo > 0) {
      const adminToken = randomBytes(24).toString("hex");
      // Stable per output folder: a restart removes the sandboxes a killed run left behind.
      const nodeId = `generate-${createHash("sha256").update(realpathSync(options.out)).digest("hex").slice(0, 12)}`;
      const cap = options.maxTokensCap ?? (engine ? MOCK_MAX_TOKENS_CAP : undefined);
      node = await startNode(
        parseNodeConfig({
          node_id: nodeId,
          admin_token: adminToken,
          // This process drives its own node with the admin token; the rollout token is never handed out.
          rollout_token: randomBytes(24).toString("hex"),
          port: 0,
          db: join(nodeDir, "node.db"),
          runtime: options.runtime,
          engine: { backend: options.backend, urls: [engineUrl], model, ...(options.apiKey ? { api_key: options.apiKey } : {}) },
          sampling: { ...(cap !== undefined && { max_tokens_cap: cap }), ...(options.temperature !== undefined && { temperature: options.temperature }) },
          workers: {
            init: Math.min(4, options.concurrency),
            run: options.concurrency,
            postrun: Math.max(2, Math.ceil(options.concurrency / 2)),
            ready_backlog: options.concurrency,
          },
          tasks: tasksFile,
        }),
      );
      await drive(node, adminToken, pending, options, (result, sample, calls) => {
        const built = buildAttempt(result, calls, sample, ctx, new Date().toISOString());
        const accepted = rule.accepts(built.facts);
        const text = accepted && dedup ? assistantText(built.rows) : "";
        const duplicateOf = accepted && dedup ? dedup.find(result.task_id, text) : null;
        const outcome = !accepted ? (built.failure && result.status !== "COMPLETED" ? "failed" : "rejected") : duplicateOf !== null ? "duplicate" : "accepted";
        const attempt = {
          ...built.attempt,
          outcome,
          failure_kind: outcome === "accepted" ? null : outcome === "duplicate" ? "duplicate" : (built.failure ?? "rejected"),
          duplicate_of: duplicateOf,
        } as const;
        output!.record(attempt, outcome === "accepted" ? built.rows : []);
        if (outcome === "accepted") dedup?.keep(result.task_id, sample, text);
        progress.add(attempt);
      });
      progress.draw(true);
    }
    const summary = summarize(ours(), {
      tasks: taskIds.length,
      samples: options.samples,
      resumedAttempts: resumed,
      wallTimeS: (performance.now() - started) / 1000,
    });
    output.writeSummary(summary);
    return summary;
  } finally {
    await node?.stop().catch((err) => log(`stopping the node: ${err}`));
    await engine?.stop();
    output?.close();
    rmSync(nodeDir, { recursive: true, force: true });
  }
}

/** Submits tasks a window at a time and hands each new result (with its calls) to `onResult` until all are in or the signal aborts. */
async function drive(
  node: RunningNode,
  adminToken: string,
  pending: Pending[],
  options: GenerateOptions,
  onResult: (result: SessionResult, sample: number, calls: RecordedCall[]) => void,
): Promise<void> {
  const admin = { authorization: `Bearer ${adminToken}` };
  const window = Math.max(2, options.concurrency * 2);
  const inFlight = () => pending.filter((p) => p.submitted && !p.finished).reduce((n, p) => n + p.samples.length - p.seen.size, 0);
  const submit = async (p: Pending) => {
    const res = await fetch(`${node.url}/rollout/task/submit`, {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({
        task_id: p.taskId,
        agent: { harness: options.harness },
        num_samples: p.samples.length,
        timeout_seconds: options.timeoutSeconds,
        builder: { strategy: "template-aware" },
        metadata: { group_id: p.taskId },
      }),
    });
    if (!res.ok) throw new PolarError("internal", `submit ${p.taskId}: HTTP ${res.status} ${await res.text()}`);
    p.submitted = true;
  };
  let aborted = false;
  const onAbort = () => void (aborted = true);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      if (aborted || options.signal?.aborted) break;
      for (const p of pending) if (!p.submitted && inFlight() < window) await submit(p);
      const open = pending.filter((p) => p.submitted && !p.finished);
      if (open.length === 0 && pending.every((p) => p.submitted)) return;
      for (const p of open) {
        const status = TaskStatus.parse(await (await fetch(`${node.url}/rollout/task/${encodeURIComponent(p.taskId)}`, { headers: admin })).json());
        for (const result of status.results) {
          if (p.seen.has(result.session_id)) continue;
          p.seen.add(result.session_id);
          const cause = (result.metadata.failure as { cause?: string } | undefined)?.cause;
          if (cause && INTERRUPTED.has(cause)) continue;
          const index = typeof result.metadata.sample_index === "number" ? result.metadata.sample_index : -1;
          const sample = p.samples[index];
          if (sample === undefined) throw new PolarError("internal", `task ${p.taskId}: result for unknown sample ${index}`);
          const sessionId = typeof result.metadata.gateway_session_id === "string" ? result.metadata.gateway_session_id : undefined;
          let calls: RecordedCall[] = [];
          if (sessionId) {
            const res = await fetch(`${node.url}/v1/sessions/${sessionId}/calls`, { headers: admin });
            if (!res.ok) throw new PolarError("internal", `calls of ${sessionId}: HTTP ${res.status}`);
            calls = SessionCalls.parse(await res.json()).calls;
          }
          onResult(result, sample, calls);
          if (sessionId) await fetch(`${node.url}/v1/sessions/${sessionId}`, { method: "DELETE", headers: admin });
        }
        if (status.status !== "running" && status.status !== "cancelling") p.finished = true;
      }
      await Bun.sleep(POLL_MS);
    }
    // Interrupted: what is running is cancelled; its samples stay missing from the ledger and run on resume.
    for (const p of pending.filter((x) => x.submitted && !x.finished))
      await fetch(`${node.url}/rollout/task/${encodeURIComponent(p.taskId)}`, { method: "DELETE", headers: admin });
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}
