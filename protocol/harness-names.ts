// Why: trainers written for Polar name harnesses and builder strategies in Polar's spelling
// (`claude_code`, `per_request`); nodes and the coordinator accept those and ours, and map both
// here, with the closed set of harness kinds a rollout may name.
import type { Strategy } from "./trace.ts";
import { STRATEGIES } from "./trace.ts";

export const HARNESS_KINDS = ["codex", "claude-code", "qwen-code", "pi", "mini", "command"] as const;
export type HarnessKind = (typeof HARNESS_KINDS)[number];

const POLAR_HARNESS_NAMES: Record<string, HarnessKind> = {
  claude_code: "claude-code",
  qwen_code: "qwen-code",
  codex: "codex",
  pi: "pi",
  mini: "mini",
  mini_swe_agent: "mini",
};

const POLAR_BUILDER_NAMES: Record<string, Strategy> = {
  per_request: "per-call",
  prefix_merging: "prefix-merge",
};

/** Every harness name a request may use. */
export const ACCEPTED_HARNESS_NAMES = [...new Set([...Object.keys(POLAR_HARNESS_NAMES), ...HARNESS_KINDS])];
export const ACCEPTED_BUILDER_NAMES = [...Object.keys(POLAR_BUILDER_NAMES), ...STRATEGIES];

export function harnessKind(name: string): HarnessKind | undefined {
  if ((HARNESS_KINDS as readonly string[]).includes(name)) return name as HarnessKind;
  return POLAR_HARNESS_NAMES[name];
}

export function builderStrategy(name: string): Strategy | undefined {
  if ((STRATEGIES as readonly string[]).includes(name)) return name as Strategy;
  return POLAR_BUILDER_NAMES[name];
}

/** The harness kind and builder strategy a request names, or why they cannot run. */
export function resolveNames(harness: string, strategy: string): { ok: true; harness: HarnessKind; strategy: Strategy } | { ok: false; refusal: string } {
  const kind = harnessKind(harness);
  if (!kind) return { ok: false, refusal: `unknown harness "${harness}"; expected one of ${ACCEPTED_HARNESS_NAMES.join(", ")}` };
  const built = builderStrategy(strategy);
  if (!built) return { ok: false, refusal: `unknown builder strategy "${strategy}"; expected one of ${ACCEPTED_BUILDER_NAMES.join(", ")}` };
  return { ok: true, harness: kind, strategy: built };
}

/** Why a request naming this harness (and builder strategy, Polar's default when absent) cannot run; null when it can. */
export function unknownNames(harness: string, strategy: string | undefined): string | null {
  const resolved = resolveNames(harness, strategy ?? "per_request");
  return resolved.ok ? null : resolved.refusal;
}
