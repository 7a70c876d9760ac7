// Why: Polar's rollout API is a FastAPI app; trainer integrations read its 422 bodies
// (`{detail: [{type, loc, msg}]}`), so schema errors are answered in exactly that shape.
import type { z } from "zod";

export interface FastApiErrorItem {
  type: string;
  loc: (string | number)[];
  msg: string;
}

export function fastApiDetail(error: z.ZodError, root: "body" | "query" | "path" = "body"): FastApiErrorItem[] {
  return error.issues.map((issue) => ({
    type: issue.code === "invalid_type" && issue.input === undefined ? "missing" : issue.code,
    loc: [root, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: issue.input === undefined && issue.code === "invalid_type" ? "Field required" : issue.message,
  }));
}

export function unprocessable(detail: FastApiErrorItem[]): Response {
  return Response.json({ detail }, { status: 422 });
}
