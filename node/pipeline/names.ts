// Why: trainers written for Polar name harnesses and builder strategies in Polar's spelling
// (`claude_code`, `per_request`); the node accepts those and ours, and maps both here.
import type { Strategy } from "../../protocol/trace.ts";
import { STRATEGIES } from "../../protocol/trace.ts";
import { HARNESS_KINDS, type HarnessKind } from "../harness/registry.ts";

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
