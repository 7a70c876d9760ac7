// Why: every route reads a JSON body the same way: too large, invalid JSON and schema mismatches
// become a 4xx naming the problem (the field, for schemas), never a 500.
import type { Context } from "hono";
import type { z } from "zod";
import { PolarError } from "../../errors.ts";
import { parseOrBadRequest } from "../dialects/bad-request.ts";

/**
 * The body as JSON; an empty body reads as `emptyAs` when given. A declared length over
 * `maxBytes` is refused before reading (Bun.serve's own cap, set in server.ts, bounds chunked
 * bodies), so the caller answers it in its own error shape.
 */
export async function readJson(c: Context, emptyAs?: unknown, maxBytes = Number.POSITIVE_INFINITY): Promise<unknown> {
  const declared = Number(c.req.header("content-length") ?? 0);
  if (declared > maxBytes) throw new PolarError("too_large", `request body exceeds ${maxBytes} bytes`);
  const text = await c.req.text();
  if (!text.trim() && emptyAs !== undefined) return emptyAs;
  try {
    return JSON.parse(text);
  } catch {
    throw new PolarError("bad_request", "request body is not valid JSON");
  }
}

export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  return parseOrBadRequest(schema, await readJson(c, {}));
}
