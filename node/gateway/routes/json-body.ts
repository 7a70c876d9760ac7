// Why: every route reads a JSON body the same way: too large (declared or streamed), nested too
// deep, invalid JSON and schema mismatches become a 4xx naming the problem, never a 500, and are
// refused before any parsing work.
import type { Context } from "hono";
import type { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";
import { parseOrBadRequest } from "../dialects/bad-request.ts";
import { exceedsJsonDepth, readLimitedText } from "../../../lib/http-body.ts";

export interface BodyLimits {
  /** Bytes a body may have, declared or streamed (chunked bodies are counted as they arrive). */
  maxBytes: number;
  /** Object/array nesting a body may have (`{}` is 1). */
  maxDepth: number;
}

/** The body as JSON; an empty body reads as `emptyAs` when given. */
export async function readJson(c: Context, limits: BodyLimits, emptyAs?: unknown): Promise<unknown> {
  const text = await readText(c.req.raw, limits.maxBytes);
  if (!text.trim() && emptyAs !== undefined) return emptyAs;
  if (exceedsJsonDepth(text, limits.maxDepth)) {
    throw new PolarError("bad_request", `request body nests objects/arrays deeper than ${limits.maxDepth} levels`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new PolarError("bad_request", "request body is not valid JSON");
  }
}

export async function readBody<T extends z.ZodType>(c: Context, schema: T, limits: BodyLimits): Promise<z.infer<T>> {
  return parseOrBadRequest(schema, await readJson(c, limits, {}));
}

function tooLarge(maxBytes: number): PolarError {
  return new PolarError("too_large", `request body exceeds ${maxBytes} bytes`);
}

async function readText(request: Request, maxBytes: number): Promise<string> {
  const text = await readLimitedText(request, maxBytes);
  if (text === null) throw tooLarge(maxBytes);
  return text;
}
