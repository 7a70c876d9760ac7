// Why: the mock engine's behaviour is a script shared by tests, the demo and the docs
// (`{steps:[{think?, shell?, text?}]}`); the turn index (assistant messages so far) picks a step.
import { readFileSync } from "node:fs";
import { z } from "zod";

export const ScriptStep = z.object({ think: z.string().optional(), shell: z.string().optional(), text: z.string().optional() }).strict();
export type ScriptStep = z.infer<typeof ScriptStep>;

export const Script = z.object({ steps: z.array(ScriptStep) }).strict();
export type Script = z.infer<typeof Script>;

export const DEFAULT_SCRIPT: Script = { steps: [{ shell: "echo hello > out.txt" }, { text: "Done." }] };
export const FINAL_STEP: ScriptStep = { text: "Done." };

export function stepForTurn(script: Script, turn: number): ScriptStep {
  return script.steps[turn] ?? FINAL_STEP;
}

export function loadScriptFile(path: string): Script {
  return Script.parse(JSON.parse(readFileSync(path, "utf8")));
}
