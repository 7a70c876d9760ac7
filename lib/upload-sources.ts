// Why: `upload_file` / `upload_dir` steps may name host paths. A request is checked at submit, not
// discovered broken in every session's prepare: relative sources resolve against the task file
// the task came from (a bundled task line sent as is works), a relative source with no task file
// behind it is refused, and every host path must pass the service's host-path policy — by
// default it must exist; the sandbox's path-roots policy plugs in here (HostPathPolicy).
import { stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { ValidationDetail } from "./fastapi-errors.ts";

export type SourceKind = "file" | "dir";

/** Decides whether a request may read a host path; answers why not, or null. */
export interface HostPathPolicy {
  refuse(path: string, kind: SourceKind): Promise<string | null>;
}

/** The default policy: the path must exist and be of the kind the step needs. */
export const SOURCES_MUST_EXIST: HostPathPolicy = {
  async refuse(path, kind) {
    const found = await stat(path).catch(() => null);
    if (!found) return `${path} does not exist`;
    if (kind === "dir" && !found.isDirectory()) return `${path} is not a folder`;
    if (kind === "file" && !found.isFile()) return `${path} is not a file`;
    return null;
  },
};

const STEP_LISTS = ["prepare", "eval_prepare"] as const;

interface SourceStep {
  list: (typeof STEP_LISTS)[number];
  index: number;
  kind: SourceKind;
  step: Record<string, unknown> & { source: string };
}

function sourceSteps(runtime: Record<string, unknown>): SourceStep[] {
  const out: SourceStep[] = [];
  for (const list of STEP_LISTS) {
    const steps = runtime[list];
    if (!Array.isArray(steps)) continue;
    steps.forEach((step: unknown, index) => {
      if (typeof step !== "object" || step === null) return;
      const s = step as Record<string, unknown>;
      if (typeof s.source !== "string") return;
      if (s.type === "upload_dir") out.push({ list, index, kind: "dir", step: s as SourceStep["step"] });
      if (s.type === "upload_file") out.push({ list, index, kind: "file", step: s as SourceStep["step"] });
    });
  }
  return out;
}

/** The runtime with relative sources resolved against `baseDir` (a copy; the input is untouched). */
export function resolveRelativeSources(runtime: Record<string, unknown>, baseDir: string): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...runtime };
  for (const list of STEP_LISTS) {
    const steps = runtime[list];
    if (!Array.isArray(steps)) continue;
    copy[list] = steps.map((step: unknown) => {
      if (typeof step !== "object" || step === null) return step;
      const s = step as Record<string, unknown>;
      if ((s.type !== "upload_dir" && s.type !== "upload_file") || typeof s.source !== "string" || isAbsolute(s.source)) return step;
      return { ...s, source: resolve(baseDir, s.source) };
    });
  }
  return copy;
}

/** Every host-path source of a parsed request's runtime checked; one 422 detail per refusal. */
export async function checkUploadSources(runtime: Record<string, unknown> | null | undefined, policy: HostPathPolicy): Promise<ValidationDetail[]> {
  if (!runtime) return [];
  const details: ValidationDetail[] = [];
  for (const { list, index, kind, step } of sourceSteps(runtime)) {
    const loc = ["body", "runtime", list, index, "source"];
    if (!isAbsolute(step.source)) {
      details.push({
        type: "value_error",
        loc,
        msg: `Value error, relative upload source ${step.source} needs a task file to resolve against: name a task of this server's task file, or send an absolute path`,
        input: step.source,
      });
      continue;
    }
    const refusal = await policy.refuse(step.source, kind);
    if (refusal) details.push({ type: "value_error", loc, msg: `Value error, upload source refused: ${refusal}`, input: step.source });
  }
  return details;
}
