// Why: docs/wire.md, the reference of every wire shape, is generated from the zod schemas in
// protocol/ (zod's JSON Schema export, plus each schema's and field's doc comment) so it cannot
// drift from them; a test fails when the committed page is stale.
// Usage: bun scripts/gen-wire-docs.ts   (rewrites docs/wire.md)
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import * as admin from "../protocol/admin.ts";
import * as calls from "../protocol/calls.ts";
import * as chat from "../protocol/chat.ts";
import * as errors from "../protocol/errors.ts";
import * as evaluation from "../protocol/evaluation.ts";
import * as generate from "../protocol/generate.ts";
import * as rollout from "../protocol/rollout.ts";
import * as runtime from "../protocol/runtime.ts";
import * as sessions from "../protocol/sessions.ts";
import * as trace from "../protocol/trace.ts";
import * as harnessNames from "../protocol/harness-names.ts";
import * as nodeLink from "../protocol/node-link.ts";
import * as task from "../protocol/task.ts";
import * as trainerStream from "../protocol/trainer-stream.ts";
import * as traceFrame from "../protocol/trace-frame.ts";
import * as taskStats from "../protocol/task-stats.ts";
import * as gym from "../protocol/gym.ts";
import * as enginePolicy from "../protocol/engine-policy.ts";

export const WIRE_DOCS_PATH = resolve(import.meta.dir, "../docs/wire.md");

/** The protocol modules in reading order, with what they are for (a test checks none is missing). */
export const MODULES: { file: string; title: string; exports: Record<string, unknown> }[] = [
  { file: "sessions.ts", title: "Session API", exports: sessions },
  { file: "calls.ts", title: "Recorded calls", exports: calls },
  { file: "chat.ts", title: "Pivot chat (the request and response recorded with each call)", exports: chat },
  { file: "trace.ts", title: "Traces (rebuilt trajectories)", exports: trace },
  { file: "admin.ts", title: "Admin API and health", exports: admin },
  { file: "errors.ts", title: "Errors", exports: errors },
  { file: "rollout.ts", title: "Rollout API (Polar's TaskRequest, SessionResult, TaskStatus, TaskResult)", exports: rollout },
  { file: "runtime.ts", title: "Sandbox runtime (Polar's RuntimeSpec)", exports: runtime },
  { file: "harness-names.ts", title: "Harness and builder names (Polar's spelling and ours)", exports: harnessNames },
  { file: "task.ts", title: "Task files (TaskRequest + SWE-bench rows)", exports: task },
  { file: "evaluation.ts", title: "Evaluation results", exports: evaluation },
  { file: "generate.ts", title: "`polar generate` output (trajectories.jsonl, attempts.jsonl, run.json, summary.json)", exports: generate },
  { file: "node-link.ts", title: "Node ↔ coordinator WebSocket (`/v1/node`)", exports: nodeLink },
  { file: "trainer-stream.ts", title: "Trainer ↔ coordinator WebSocket (`/v1/trainer`)", exports: trainerStream },
  { file: "trace-frame.ts", title: "Binary trace frames (layout: [coordinator.md](coordinator.md#binary-trace-frames))", exports: traceFrame },
  { file: "task-stats.ts", title: "Per-task pass rates (trainer stream `task_stats`, `GET /v1/admin/tasks`)", exports: taskStats },
  { file: "gym.ts", title: "NeMo Gym agent server", exports: gym },
  { file: "engine-policy.ts", title: "Mock engine's trainable policy (`/polar/policy`, examples/learn)", exports: enginePolicy },
];

const ENDPOINTS: [string, string][] = [
  ["`POST /v1/sessions`", "body [CreateSessionBody](#createsessionbody) → 201 [SessionInfo](#sessioninfo) (with `token`, shown once)"],
  ["`GET /v1/sessions/:id`", "[SessionInfo](#sessioninfo)"],
  ["`GET /v1/sessions/:id/calls`", "[SessionCalls](#sessioncalls)"],
  ["`GET /v1/sessions/:id/trajectory?strategy=&max_context_drift=`", "query [TrajectoryQuery](#trajectoryquery) → [SessionTrajectory](#sessiontrajectory)"],
  ["`POST /v1/sessions/:id/close`", "[SessionInfo](#sessioninfo)"],
  ["`DELETE /v1/sessions/:id`", "[DeletedSession](#deletedsession)"],
  ["`POST /v1/admin/pause`, `GET /v1/admin/state`", "[AdminState](#adminstate)"],
  ["`POST /v1/admin/resume`", "body [ResumeBody](#resumebody) → [AdminState](#adminstate)"],
  ["`GET /health`", "[Health](#health) (polar gateway); [NodeHealth](#nodehealth) (polar node: 503 while its store cannot write)"],
  ["`GET /v1/admin/dashboard` (node and coordinator, admin token)", "[DashboardSnapshot](#dashboardsnapshot)"],
  ["`GET /v1/admin/groups/:id` (coordinator), `GET /v1/admin/tasks/:id` (node)", "[GroupDetail](#groupdetail)"],
  ["`GET /v1/admin/rollouts/:id[?group=]`", "[RolloutDetail](#rolloutdetail)"],
  [
    "`POST /v1/admin/pause` (coordinator)",
    "[ClusterPaused](#clusterpaused); `POST /v1/admin/resume` body [ResumeBody](#resumebody) → `{policy_version, paused}`",
  ],
  [
    "`GET /events` (node and coordinator, admin token as `Authorization: Bearer`)",
    "Server-Sent Events: `id: n` + `data: ` [FeedFrame](#feedframe); `rollout.result` carries a [DashboardResult](#dashboardresult), `group.summary` a [DashboardGroup](#dashboardgroup) (docs/coordinator.md lists every event)",
  ],
  [
    'binary result frames: `ws /v1/trainer` after a hello with `encoding: "binary"`, `ws /v1/node` after a welcome with `trace_frames: true`',
    "a trace frame (`protocol/trace-frame.ts`): magic `PTF1`, a JSON header (the `result` message, its traces without `prompt_ids`, `response_ids`, `loss_mask`, `response_logprobs`) and those arrays packed; layout in [coordinator.md](coordinator.md#binary-trace-frames)",
  ],
  [
    "`GET /metrics` (node and coordinator; the admin token when `metrics_require_admin_token` / `--metrics-require-admin-token`)",
    "Prometheus text format 0.0.4 (docs/coordinator.md lists the families)",
  ],
  [
    "`DELETE /v1/admin/nodes/:id/identity`, `DELETE /v1/admin/trainers/:id/identity` (coordinator, admin token)",
    '`{node_id | trainer_id, identity: "forgotten"}`: the id\'s next hello is registered afresh (docs/security.md); 404 when none is registered',
  ],
  [
    "`POST /rollout/task/submit` (polar node and coordinator; every `/rollout/*` route takes the rollout or admin token as `Authorization: Bearer` or `X-Polar-Control-Token`, unless the service runs `--open`)",
    "body [RolloutTaskRequest](#rollouttaskrequest) → [TaskSubmitted](#tasksubmitted); 401 `{detail}` without a valid token, 403 with another role's; 422 `detail: [{type, loc, msg, input, ctx?}]` in pydantic's words, 409 while the task id is live or was cancelled before submission, 413 over 16 MiB, 503 draining or while the node's store cannot write (node)",
  ],
  ["`GET /rollout/task/:id`", '[TaskStatus](#taskstatus); 404 `{detail: "Task not found"}`'],
  ["`DELETE /rollout/task/:id[?register_if_missing=true]`", "[TaskStatus](#taskstatus) once `cancelled` (only the sessions that had finished); 404 `{detail}`"],
  ["`callback_url` (POSTed once per finished task; not for cancelled ones unless configured)", "[TaskResult](#taskresult)"],
  ["errors of the rollout API", "`{detail: string}`, or `{detail: [...]}` for 422 (docs/rollout-api.md)"],
  [
    "`GET /v1/admin/tasks?task_id=&target_pass_rate=&limit=` (coordinator, admin token)",
    "query [TaskStatsQuery](#taskstatsquery) → [TaskStatsAnswer](#taskstatsanswer)",
  ],
  ["`GET /polar/policy` (polar mock-engine --trainable)", "[PolicyState](#policystate)"],
  [
    "`POST /polar/policy` (policy token)",
    "body [PolicyWeights](#policyweights) → [PolicyState](#policystate); 401 without the token, 409 for an older version",
  ],
  ["errors of the session and admin routes above, and unknown paths outside the LLM APIs", "[AdminErrorBody](#adminerrorbody)"],
  ["errors under `/v1/chat/*`, `/v1/responses*` (and `/v1/models*` without `anthropic-version`)", "[OpenAiErrorBody](#openaierrorbody)"],
  ["errors under `/v1/messages*` (and `/v1/models*` with `anthropic-version`)", "[AnthropicErrorBody](#anthropicerrorbody)"],
  ["`POST /run` (polar gym)", "body [GymRunRequest](#gymrunrequest) → [GymRunResult](#gymrunresult); 422 `detail: [{loc, msg, type}]` (docs/gym.md)"],
  ["`POST /aggregate_metrics` (polar gym)", "body [GymAggregateMetricsRequest](#gymaggregatemetricsrequest) → [GymAggregateMetrics](#gymaggregatemetrics)"],
];

type Json = { [key: string]: unknown };

/** Every exported zod schema, by name, in module order. */
function namedSchemas(): { module: (typeof MODULES)[number]; name: string; schema: z.ZodType }[] {
  return MODULES.flatMap((module) =>
    Object.entries(module.exports)
      .filter((entry): entry is [string, z.ZodType] => entry[1] instanceof z.ZodType)
      .map(([name, schema]) => ({ module, name, schema })),
  );
}

/** Doc comments in a protocol file: the one above `export const Name`, and those above `field:` lines inside it. */
function docComments(source: string, name: string): { schema?: string; fields: Map<string, string> } {
  const clean = (raw: string) =>
    raw
      .split("\n")
      .map((l) => l.replace(/^\s*\*?\s?/, "").trim())
      .filter(Boolean)
      .join(" ");
  const start = source.indexOf(`export const ${name} =`);
  const before = source.slice(0, start).match(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*$/);
  const next = source.indexOf("\nexport ", start + 1);
  const body = source.slice(start, next === -1 ? undefined : next);
  const fields = new Map<string, string>();
  for (const m of body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*\n\s*(\w+)\??:/g)) {
    if (!fields.has(m[2]!)) fields.set(m[2]!, clean(m[1]!));
  }
  return { ...(before ? { schema: clean(before[1]!) } : {}), fields };
}

const anchor = (name: string) => name.toLowerCase();
const code = (value: unknown) => `\`${JSON.stringify(value)}\``;

/** A JSON Schema as a short type expression; named schemas become links. */
function typeOf(s: Json): string {
  if (typeof s.$ref === "string") {
    const name = s.$ref.replace(/^#/, "");
    return `[${name}](#${anchor(name)})`;
  }
  if (s.const !== undefined) return code(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(code).join(" | ");
  const union = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (union) return union.map(typeOf).join(" | ");
  if (Array.isArray(s.allOf)) return (s.allOf as Json[]).map(typeOf).join(" & ");
  if (s.type === "array") {
    if (Array.isArray(s.prefixItems)) return `[${(s.prefixItems as Json[]).map(typeOf).join(", ")}]`;
    const item = typeOf((s.items as Json) ?? {});
    return item.includes(" ") ? `(${item})[]` : `${item}[]`;
  }
  if (s.type === "object" || s.properties || s.additionalProperties) {
    const props = s.properties as Record<string, Json> | undefined;
    if (props && Object.keys(props).length > 0) {
      const required = new Set((s.required as string[] | undefined) ?? []);
      return `{ ${Object.entries(props)
        .map(([k, v]) => `${k}${required.has(k) ? "" : "?"}: ${typeOf(v)}`)
        .join(", ")} }`;
    }
    const keys = s.propertyNames as Json | undefined;
    const values = s.additionalProperties;
    const keyType = keys && (keys.enum || keys.$ref) ? typeOf(keys) : "string";
    if (values === false) return "{}";
    return `map<${keyType}, ${values && typeof values === "object" && Object.keys(values).length > 0 ? typeOf(values as Json) : "any"}>`;
  }
  if (Array.isArray(s.type)) return s.type.join(" | ");
  if (typeof s.type === "string") return s.type;
  return "any";
}

/** Constraints and defaults worth a reader's attention. */
function notesOf(s: Json): string {
  const notes: string[] = [];
  if (s.default !== undefined) notes.push(`default ${code(s.default)}`);
  if (typeof s.minimum === "number" && s.minimum !== Number.MIN_SAFE_INTEGER) notes.push(`≥ ${s.minimum}`);
  if (typeof s.exclusiveMinimum === "number") notes.push(`> ${s.exclusiveMinimum}`);
  if (typeof s.maximum === "number" && s.maximum !== Number.MAX_SAFE_INTEGER) notes.push(`≤ ${s.maximum}`);
  if (typeof s.minLength === "number" && s.minLength > 0) notes.push(`non-empty`);
  if (typeof s.minItems === "number" && s.minItems > 0) notes.push(`≥ ${s.minItems} items`);
  return notes.join(", ");
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function renderWireDocs(): string {
  const all = namedSchemas();
  const registry = z.registry<{ id: string }>();
  for (const { name, schema } of all) if (!registry.has(schema)) registry.add(schema, { id: name });
  const { schemas } = z.toJSONSchema(registry, { io: "input", unrepresentable: "any", uri: (id) => `#${id}` }) as { schemas: Record<string, Json> };

  const out: string[] = [
    "# Wire reference",
    "",
    "<!-- Generated by `bun scripts/gen-wire-docs.ts` from the zod schemas in protocol/; do not edit by hand. -->",
    "",
    "Every JSON Polar serves or stores uses these shapes; all keys are snake_case. Each shape is one",
    "zod schema in `protocol/` (the name in each heading), parsed at every trust boundary. A field",
    "marked optional may be absent; `null` is a value only where the type says so.",
    "",
    "## Endpoints",
    "",
    "| endpoint | answers |",
    "|---|---|",
    ...ENDPOINTS.map(([endpoint, shape]) => `| ${endpoint} | ${shape} |`),
    "",
    "The LLM endpoints (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`, `/v1/models`) speak",
    "the OpenAI and Anthropic APIs themselves; what they record is a [RecordedCall](#recordedcall).",
  ];
  for (const module of MODULES) {
    const source = readFileSync(resolve(import.meta.dir, "../protocol", module.file), "utf8");
    out.push("", `## ${module.title}`, "", `\`protocol/${module.file}\``);
    for (const { name } of all.filter((s) => s.module === module)) {
      const json = schemas[name]!;
      const docs = docComments(source, name);
      out.push("", `### ${name}`, "");
      if (docs.schema) out.push(docs.schema, "");
      const props = json.properties as Record<string, Json> | undefined;
      if (json.type === "object" && props && Object.keys(props).length > 0) {
        const required = new Set((json.required as string[] | undefined) ?? []);
        out.push("| field | type | required | notes |", "|---|---|---|---|");
        for (const [key, value] of Object.entries(props)) {
          const note = [docs.fields.get(key), notesOf(value)].filter(Boolean).join(" ");
          out.push(`| \`${key}\` | ${cell(typeOf(value))} | ${required.has(key) ? "yes" : "no"} | ${cell(note)} |`);
        }
        if (json.additionalProperties !== undefined && json.additionalProperties !== false) out.push("", "Unknown keys are kept.");
      } else if (Array.isArray(json.oneOf ?? json.anyOf) && ((json.oneOf ?? json.anyOf) as Json[]).every((b) => b.type === "object")) {
        out.push("One of:", "");
        for (const branch of (json.oneOf ?? json.anyOf) as Json[]) out.push(`- ${typeOf(branch)}`);
      } else {
        out.push(`Type: ${typeOf(json)}`);
      }
    }
  }
  return `${out.join("\n")}\n`;
}

if (import.meta.main) {
  writeFileSync(WIRE_DOCS_PATH, renderWireDocs());
  console.log(`wrote ${WIRE_DOCS_PATH}`);
}
