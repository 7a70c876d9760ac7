// Why: nodes, trainers and operators hold different tokens that must never stand in for each
// other; this is the one place a presented credential is compared, in constant time.
import { timingSafeEqual } from "node:crypto";

export type Role = "node" | "trainer" | "admin";

/** The token of `Authorization: Bearer <token>`, if any. */
export function presentedToken(headers: Headers): string | undefined {
  const bearer = headers
    .get("authorization")
    ?.match(/^Bearer\s+(.+)$/i)?.[1]
    ?.trim();
  return bearer || undefined;
}

/** Constant-time: whether `presented` is `expected` (false when nothing was presented). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
