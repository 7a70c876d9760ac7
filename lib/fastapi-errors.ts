// Why: Polar's rollout server is FastAPI, and trainer integrations read its 422 bodies; a zod
// failure is rendered here as FastAPI does — `detail: [{loc, msg, type}]` with `loc` starting at
// "body" — in one place for every route.
import type { z } from "zod";

export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

function pydanticType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? "missing" : `${issue.expected}_type`;
    case "too_small":
      return issue.origin === "string" || issue.origin === "array" ? "too_short" : issue.inclusive ? "greater_than_equal" : "greater_than";
    case "too_big":
      return issue.origin === "string" || issue.origin === "array" ? "too_long" : issue.inclusive ? "less_than_equal" : "less_than";
    case "invalid_value":
      return "enum";
    case "invalid_format":
      return issue.format === "url" ? "url_parsing" : "string_pattern_mismatch";
    case "unrecognized_keys":
      return "extra_forbidden";
    default:
      return "value_error";
  }
}

export function validationDetail(error: z.ZodError): ValidationDetail[] {
  return error.issues.map((issue) => ({
    loc: ["body", ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: issue.code === "invalid_type" && issue.input === undefined ? "Field required" : issue.message,
    type: pydanticType(issue),
  }));
}

/** A 422 with one detail entry (fields checked after the schema, e.g. agent.harness). */
export function fieldError(loc: (string | number)[], msg: string, type = "value_error"): { detail: ValidationDetail[] } {
  return { detail: [{ loc: ["body", ...loc], msg, type }] };
}
