import { describe, expect, test } from "bun:test";
import { resolveNames, unknownNames } from "./harness-names.ts";

describe("harness and builder names", () => {
  test("Polar's spellings and ours resolve to one kind; an unknown one is refused by name, never mapped to another", () => {
    expect(resolveNames("claude_code", "per_request")).toEqual({ ok: true, harness: "claude-code", strategy: "per-call" });
    expect(resolveNames("mini", "template-aware")).toEqual({ ok: true, harness: "mini", strategy: "template-aware" });
    const harness = resolveNames("copilot", "per_request");
    expect(harness.ok).toBe(false);
    expect(!harness.ok && harness.refusal).toStartWith(
      'unknown harness "copilot"; expected one of claude_code, qwen_code, codex, pi, mini, mini_swe_agent, claude-code',
    );
    const builder = resolveNames("mini", "whole_session");
    expect(!builder.ok && builder.refusal).toStartWith('unknown builder strategy "whole_session"; expected one of per_request, prefix_merging, per-call');
    expect(unknownNames("mini", undefined)).toBeNull();
  });
});
