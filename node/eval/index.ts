// Why: what the pipeline and the CLI use from node/eval.
export { evaluate, evaluatorStrategy, type EvaluateInput, type HarnessResult } from "./evaluate.ts";
export { collectPatch, EXCLUDED_FOLDERS, type CollectedPatch } from "./collect-patch.ts";
export { evaluateSwePatch } from "./swe.ts";
export { loadTaskFile, parseTaskLines, type LoadedTasks, type TaskFileIssue } from "./task.ts";
export { runtimeSource, hostNodeMounts, freshEvalSandbox, type SandboxSource } from "./sandbox-source.ts";
export { validateTasks, type TaskValidation } from "./validate.ts";
