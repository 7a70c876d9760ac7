// Why: `POST /rollout/task/submit` is served by `polar node` and by the coordinator, and both must
// refuse a bad TaskRequest exactly as Polar's FastAPI server does (422, `detail` naming each
// field, harness and builder names in Polar's spelling or ours); the check is written once here.
import { ACCEPTED_BUILDER_NAMES, ACCEPTED_HARNESS_NAMES, builderStrategy, harnessKind, type HarnessKind } from "../protocol/harness-names.ts";
import { TaskRequest } from "../protocol/rollout.ts";
import type { Strategy } from "../protocol/trace.ts";
import { fieldError, validationDetail, type ValidationDetail } from "./fastapi-errors.ts";

export type TaskSubmission = { ok: true; request: TaskRequest; harness: HarnessKind; strategy: Strategy } | { ok: false; detail: ValidationDetail[] };

/** Reads a submit body; `withDefaults` fills what a task file's row defines for the named task. */
export async function readTaskSubmission(req: Request, withDefaults: (raw: Record<string, unknown>) => Record<string, unknown> = (raw) => raw): Promise<TaskSubmission> {
  let body: unknown;
  try {
    body = await req.json();
  } catch (err) {
    return { ok: false, ...fieldError([0], `JSON decode error: ${err instanceof Error ? err.message : String(err)}`, "json_invalid") };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, ...fieldError([], "Input should be a valid dictionary", "model_attributes_type") };
  const parsed = TaskRequest.safeParse(withDefaults(body as Record<string, unknown>));
  if (!parsed.success) return { ok: false, detail: validationDetail(parsed.error) };
  const request = parsed.data;
  const harness = harnessKind(request.agent.harness);
  if (!harness) return { ok: false, ...fieldError(["agent", "harness"], `unknown harness "${request.agent.harness}"; expected one of ${ACCEPTED_HARNESS_NAMES.join(", ")}`, "enum") };
  const strategy = builderStrategy(request.builder.strategy);
  if (!strategy) return { ok: false, ...fieldError(["builder", "strategy"], `unknown builder strategy "${request.builder.strategy}"; expected one of ${ACCEPTED_BUILDER_NAMES.join(", ")}`, "enum") };
  return { ok: true, request, harness, strategy };
}
