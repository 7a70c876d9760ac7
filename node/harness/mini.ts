// Why: the adapter of Polar's own bash-only agent (mini/agent.ts): it needs nothing but Bun,
// so it is the reference harness of tests and the embedded demo.
import { join } from "node:path";
import { collectStdout, maxRetries, options, polarEnv, writeConfig } from "./common.ts";
import type { HarnessAdapter, HarnessSpec } from "./types.ts";

export const MINI_AGENT_SCRIPT = join(import.meta.dir, "mini", "agent.ts");
export const MINI_DEFAULT_MAX_TURNS = 30;
export const MINI_DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

export function miniConfig(spec: HarnessSpec) {
  const opts = options(spec);
  return {
    base_url: spec.gateway.openaiBaseUrl,
    model: spec.model,
    instruction: spec.instruction,
    work_dir: spec.workDir,
    max_turns: spec.limits.maxTurns ?? MINI_DEFAULT_MAX_TURNS,
    command_timeout_ms: opts.commandTimeoutMs ?? MINI_DEFAULT_COMMAND_TIMEOUT_MS,
    max_retries: maxRetries(spec),
    ...(opts.maxOutputTokens === undefined ? {} : { max_tokens: opts.maxOutputTokens }),
  };
}

export const miniAdapter: HarnessAdapter = {
  kind: "mini",
  async prepare(spec) {
    const configPath = await writeConfig(join(spec.homeDir, ".mini"), "config.json", JSON.stringify(miniConfig(spec), null, 2));
    return {
      command: [process.execPath, MINI_AGENT_SCRIPT, configPath],
      env: { ...polarEnv(spec), OPENAI_API_KEY: spec.gateway.token },
      stdin: "closed",
    };
  },
  collect: collectStdout,
};
