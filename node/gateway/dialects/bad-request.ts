// Why: a client that sent a malformed body needs to know which field is wrong; zod nests the
// useful issue inside union branches, so this finds it and names it by its JSON path.
import type { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";

interface Located {
  path: PropertyKey[];
  message: string;
}

/** The most specific issue: inside a union, the branch that got furthest into the value. */
function locate(issue: z.core.$ZodIssue): Located {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { path: issue.path, message: issue.message };
  let best: Located | undefined;
  for (const branch of issue.errors) {
    for (const inner of branch) {
      const found = locate(inner);
      if (!best || found.path.length > best.path.length) best = found;
    }
  }
  return best ? { path: [...issue.path, ...best.path], message: best.message } : { path: issue.path, message: issue.message };
}

/** PolarError("bad_request") naming the offending field, e.g. `messages.1.content.0.id: …`. */
export function badRequestFromZod(error: z.ZodError): PolarError {
  const first = error.issues[0];
  if (!first) return new PolarError("bad_request", "invalid request body");
  const { path, message } = locate(first);
  const field = path.length > 0 ? path.map(String).join(".") : "body";
  return new PolarError("bad_request", `${field}: ${message}`, { issues: error.issues });
}

/** Validates a body with a zod schema, throwing a bad_request that names the field. */
export function parseOrBadRequest<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw badRequestFromZod(parsed.error);
  return parsed.data;
}
