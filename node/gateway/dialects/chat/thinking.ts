// Why: OpenAI clients ask for reasoning with an effort level (`reasoning_effort`, Responses
// `reasoning.effort`) while the engine's chat template has one switch (`enable_thinking`); both
// OpenAI dialects map effort → switch here, the same way.

/**
 * "none" and "minimal" turn thinking off (OpenAI documents both as little or no reasoning);
 * "low" and above turn it on; no effort leaves the template default (undefined).
 */
export function thinkingFromEffort(effort: string | null | undefined): boolean | undefined {
  if (effort === null || effort === undefined) return undefined;
  return effort !== "none" && effort !== "minimal";
}
