// Why: every route reads a JSON body the same way: invalid JSON and schema mismatches become a
// bad_request naming the field, never a 500.
import type { Context } from "hono";
import type { z } from "zod";
import { PolarError } from "../../errors.ts";

/** The body as JSON; an empty body reads as `emptyAs` when given. */
export async function readJson(c: Context, emptyAs?: unknown): Promise<unknown> {
  const text = await c.req.text();
  if (!text.trim() && emptyAs !== undefined) return emptyAs;
  try {
    return JSON.parse(text);
  } catch {
    throw new PolarError("bad_request", "request body is not valid JSON");
  }
}

export async function readBody<T extends z.ZodType>(c: Context, schema: T, what: string): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await readJson(c, {}));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ");
    throw new PolarError("bad_request", `invalid ${what}: ${issues}`);
  }
  return parsed.data;
}
