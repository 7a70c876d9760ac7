// Why: `POST /rollout/task/submit` is served by `polar node` and by the coordinator, and both must
// accept what Polar's FastAPI server accepts and refuse the rest at submit — 422 naming each
// field in pydantic's words — instead of discovering a broken request in every session. The
// checks are written once here: schema (lax, as pydantic), harness / builder / evaluator names,
// what a task outside the catalog must carry, and the upload sources it names.
import { EVALUATOR_ALIASES, EVALUATOR_STRATEGIES } from "../../protocol/evaluation.ts";
import { ACCEPTED_BUILDER_NAMES, ACCEPTED_HARNESS_NAMES, builderStrategy, harnessKind, type HarnessKind } from "../../protocol/harness-names.ts";
import { RolloutTaskRequest, type TaskRequest } from "../../protocol/rollout.ts";
import type { Strategy } from "../../protocol/trace.ts";
import { fieldError, parseLikePydantic, type ValidationDetail } from "../fastapi-errors.ts";
import { requestOverTask, type TaskCatalog } from "../task-catalog.ts";
import { checkUploadSources, resolveRelativeSources, type HostPathPolicy } from "../upload-sources.ts";

export interface AcceptedTask {
  request: TaskRequest;
  harness: HarnessKind;
  strategy: Strategy;
}

export type TaskSubmission = ({ ok: true } & AcceptedTask) | { ok: false; detail: ValidationDetail[] };

export interface SubmissionRules {
  catalog: TaskCatalog;
  hostPaths: HostPathPolicy;
  /** A service's own checks of an otherwise valid request (the node's sandbox policy, evaluation requirements). */
  refuse?: RequestRefusals;
}

/** 422 details for what a service will not run; empty when it will. */
export type RequestRefusals = (task: AcceptedTask) => ValidationDetail[] | Promise<ValidationDetail[]>;

/** What a request must carry itself when its task id names no task of the catalog. */
const UNCATALOGUED_NEEDS = ["instruction", "evaluator"] as const;

function quotedList(names: readonly string[]): string {
  return names.map((n) => `'${n}'`).join(", ");
}

/** Checks a parsed JSON body as a TaskRequest, filling what it omits from the catalog's row of its task. */
export async function readTaskSubmission(body: unknown, rules: SubmissionRules): Promise<TaskSubmission> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, ...fieldError([], "Input should be a valid dictionary or object to extract fields from", "model_attributes_type", { input: body }) };
  }
  const raw = body as Record<string, unknown>;
  const row = typeof raw.task_id === "string" ? rules.catalog.get(raw.task_id) : undefined;
  const catalogued = row !== undefined;
  // A bundled task line sent as is: its relative sources mean the task file's folder.
  const own =
    catalogued && rules.catalog.baseDir && isRecord(raw.runtime) ? { ...raw, runtime: resolveRelativeSources(raw.runtime, rules.catalog.baseDir) } : raw;
  const merged = requestOverTask(own, row as Record<string, unknown> | undefined);

  const uncatalogued: ValidationDetail[] = [];
  if (!catalogued && typeof raw.task_id === "string") {
    for (const field of UNCATALOGUED_NEEDS) {
      if (raw[field] !== undefined) continue;
      const hint = field === "evaluator" ? ' (`{"strategy": "none"}` runs it unscored)' : "";
      uncatalogued.push({
        type: "missing",
        loc: ["body", field],
        msg: `Field required: task ${raw.task_id} is not in this server's task catalog, so the request must carry ${field}${hint}`,
        input: raw,
      });
    }
  }
  const parsed = parseLikePydantic(RolloutTaskRequest, merged);
  if (!parsed.ok) {
    const named = new Set(uncatalogued.map((d) => d.loc.join(".")));
    return { ok: false, detail: [...uncatalogued, ...parsed.detail.filter((d) => !named.has(d.loc.join(".")))] };
  }
  if (uncatalogued.length > 0) return { ok: false, detail: uncatalogued };

  const request = parsed.data;
  const harness = harnessKind(request.agent.harness);
  if (!harness) return { ok: false, ...nameError(["agent", "harness"], request.agent.harness, ACCEPTED_HARNESS_NAMES) };
  const strategy = builderStrategy(request.builder.strategy);
  if (!strategy) return { ok: false, ...nameError(["builder", "strategy"], request.builder.strategy, ACCEPTED_BUILDER_NAMES) };
  const evaluator = request.evaluator?.strategy;
  if (evaluator !== undefined && !(EVALUATOR_STRATEGIES as readonly string[]).includes(EVALUATOR_ALIASES[evaluator] ?? evaluator)) {
    return { ok: false, ...nameError(["evaluator", "strategy"], evaluator, [...Object.keys(EVALUATOR_ALIASES), ...EVALUATOR_STRATEGIES]) };
  }
  const sources = await checkUploadSources(request.runtime as Record<string, unknown> | null | undefined, rules.hostPaths);
  if (sources.length > 0) return { ok: false, detail: sources };
  const refused = rules.refuse ? await rules.refuse({ request, harness, strategy }) : [];
  if (refused.length > 0) return { ok: false, detail: refused };
  return { ok: true, request, harness, strategy };
}

function nameError(loc: string[], given: string, accepted: readonly string[]): { detail: ValidationDetail[] } {
  const expected = quotedList(accepted);
  return fieldError(loc, `Input should be one of ${expected}`, "literal_error", { input: given, ctx: { expected } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
