// Why: the store asks whether a message or a tool list equals an earlier call's; comparing the
// parsed values directly costs a walk that stops at the first difference, where serialising both
// to JSON first cost a full 100 KB stringify per call.

/** Whether two JSON-like values are equal as JSON: key order is ignored, an undefined property counts as absent. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const key in x) {
    if (x[key] === undefined) continue;
    defined++;
    if (!sameJson(x[key], y[key])) return false;
  }
  for (const key in y) if (y[key] !== undefined) defined--;
  return defined === 0;
}
