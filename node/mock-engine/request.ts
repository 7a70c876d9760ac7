// Why: every mock route (vLLM and SGLang alike) reads a JSON body, validates it and checks the
// model name the same way; kept apart from any one API's module so neither imports the other's.
import { EngineError } from "./engine-error.ts";
import type { EngineContext } from "./context.ts";

/** The request's JSON body; undefined when it is not JSON (the schema then names the problem). */
export async function readJson(request: Request): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    return undefined;
  }
}

interface SafeParser<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** Validates a body; a failure is the engines' 400 naming the first offending field. */
export function parseBody<T>(schema: SafeParser<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? issue.path.map(String).join(".") : "";
    throw new EngineError("bad_request", `Invalid request${where ? ` at ${where}` : ""}: ${issue?.message ?? "malformed body"}`, where || null);
  }
  return result.data;
}

/** A request naming another model is answered 404, as vLLM and SGLang do. */
export function checkModel(ctx: EngineContext, model: string | undefined): void {
  if (model !== undefined && model !== ctx.options.model) {
    throw new EngineError("not_found", `The model \`${model}\` does not exist.`, "model");
  }
}
