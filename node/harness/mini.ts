// Why: the adapter of Polar's own bash-only agent (mini/agent.ts): it needs nothing but Bun,
// so it is the reference harness of tests and the embedded demo. The agent script (it imports
// nothing) is copied into the run's private home, so it runs the same on the host and in a sandbox.
import { join } from "node:path";
import { collectStdout, maxRetries, options, polarEnv } from "./common.ts";
import type { HarnessAdapter, HarnessSpec } from "./types.ts";

export const MINI_AGENT_SCRIPT = join(import.meta.dir, "mini", "agent.ts");
export const MINI_DEFAULT_MAX_TURNS = 30;
export const MINI_DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

export function miniConfig(spec: HarnessSpec) {
  const opts = options(spec);
  return {
    baseUrl: spec.gateway.openaiBaseUrl,
    model: spec.model,
    instruction: spec.instruction,
    workDir: spec.workDir,
    maxTurns: spec.limits.maxTurns ?? MINI_DEFAULT_MAX_TURNS,
    commandTimeoutMs: opts.commandTimeoutMs ?? MINI_DEFAULT_COMMAND_TIMEOUT_MS,
    maxRetries: maxRetries(spec),
    ...(opts.maxOutputTokens === undefined ? {} : { maxTokens: opts.maxOutputTokens }),
  };
}

export const miniAdapter: HarnessAdapter = {
  kind: "mini",
  async prepare(spec) {
    const dir = join(spec.homeDir, ".mini");
    const configPath = join(dir, "config.json");
    const agentPath = join(dir, "agent.ts");
    return {
      files: { [configPath]: JSON.stringify(miniConfig(spec), null, 2), [agentPath]: await Bun.file(MINI_AGENT_SCRIPT).text() },
      dirs: [],
      command: [spec.bunPath ?? process.execPath, agentPath, configPath],
      env: { ...polarEnv(spec), OPENAI_API_KEY: spec.gateway.token },
      stdin: "closed",
    };
  },
  collect: collectStdout,
};
