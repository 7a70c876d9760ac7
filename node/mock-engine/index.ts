// Why: the mock engine's public surface — the in-process factory for tests, the CLI entry for
// `polar mock-engine`, the options and script types.
export { startMockEngine, mockEngineApp, type RunningMockEngine } from "./server.ts";
export { runMockEngineCli, parseMockEngineArgs } from "./cli.ts";
export { MockEngineOptionsSchema, ENGINE_APIS, type MockEngineOptions, type MockEngineOptionsInput, type EngineApi } from "./options.ts";
export { Script, ScriptStep, DEFAULT_SCRIPT, loadScriptFile } from "./script.ts";
export { buildShellArguments, findShellTool, isShellTool } from "./shell-args.ts";
