// Why: vLLM (Python) re-serialises parsed tool-call arguments with json.dumps(ensure_ascii=False),
// whose default separators are ", " and ": "; matching that byte for byte keeps our parsed
// tool calls identical to vLLM's.

/** `json.dumps(value, ensure_ascii=False)` for JSON-shaped values (numbers print as JS does). */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`);
    return `{${entries.join(", ")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value)) {
    return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
  }
  return JSON.stringify(value);
}
