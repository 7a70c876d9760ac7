// Why: the closed set of harness kinds a rollout may name, and the one lookup from kind to adapter.
import { PolarError } from "../../protocol/errors.ts";
import { claudeCodeAdapter } from "./claude-code.ts";
import { codexAdapter } from "./codex.ts";
import { commandAdapter } from "./command.ts";
import { miniAdapter } from "./mini.ts";
import { piAdapter } from "./pi.ts";
import { qwenCodeAdapter } from "./qwen-code.ts";
import type { HarnessAdapter } from "./types.ts";

import { HARNESS_KINDS, type HarnessKind } from "../../protocol/harness-names.ts";

export { HARNESS_KINDS, type HarnessKind };

const ADAPTERS: Record<HarnessKind, HarnessAdapter> = {
  codex: codexAdapter,
  "claude-code": claudeCodeAdapter,
  "qwen-code": qwenCodeAdapter,
  pi: piAdapter,
  mini: miniAdapter,
  command: commandAdapter,
};

export function isHarnessKind(value: string): value is HarnessKind {
  return (HARNESS_KINDS as readonly string[]).includes(value);
}

export function getHarness(kind: string): HarnessAdapter {
  if (!isHarnessKind(kind)) throw new PolarError("bad_request", `unknown harness "${kind}" (known: ${HARNESS_KINDS.join(", ")})`);
  return ADAPTERS[kind];
}
