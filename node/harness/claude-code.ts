// Why: Claude Code speaks Anthropic Messages. Everything it would send to api.anthropic.com
// besides model calls (bootstrap, telemetry, MCP registry) is cut by one switch; its state goes
// to a private CLAUDE_CONFIG_DIR; permissions are bypassed because Polar provides the sandbox.
import { join } from "node:path";
import { collectStdout, maxRetries, options, polarEnv, runningAsRoot, specBinary } from "./common.ts";
import { promptArgument } from "./prompt-arg.ts";
import type { HarnessAdapter, HarnessSpec } from "./types.ts";

export function claudeEnv(spec: HarnessSpec, asRoot: boolean): Record<string, string> {
  const env: Record<string, string> = {
    ...polarEnv(spec),
    ANTHROPIC_BASE_URL: spec.gateway.anthropicBaseUrl,
    ANTHROPIC_API_KEY: spec.gateway.token,
    CLAUDE_CONFIG_DIR: join(spec.homeDir, ".claude"),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_MAX_RETRIES: String(maxRetries(spec)),
  };
  const maxOutputTokens = options(spec).maxOutputTokens;
  if (maxOutputTokens !== undefined) env.CLAUDE_CODE_MAX_OUTPUT_TOKENS = String(maxOutputTokens);
  // For a model it does not know (any non-Claude id), Claude Code takes its context window from
  // this variable and plans auto-compaction against it (docs/harnesses.md).
  const contextWindow = options(spec).contextWindow;
  if (contextWindow !== undefined) env.CLAUDE_CODE_MAX_CONTEXT_TOKENS = String(contextWindow);
  // bypassPermissions refuses to run as root unless told it is inside a sandbox (a Polar sandbox
  // may run it as root whatever the host user is).
  if (asRoot) env.IS_SANDBOX = "1";
  return env;
}

export const claudeCodeAdapter: HarnessAdapter = {
  kind: "claude-code",
  async prepare(spec) {
    const maxTurns = spec.limits.maxTurns;
    return {
      files: {},
      dirs: [join(spec.homeDir, ".claude")],
      command: [
        specBinary("claude-code", spec),
        "-p",
        "--permission-mode",
        "bypassPermissions",
        "--model",
        spec.model,
        "--output-format",
        "text",
        "--no-session-persistence",
        ...(maxTurns === undefined ? [] : ["--max-turns", String(maxTurns)]),
        ...(options(spec).extraArgs ?? []),
        promptArgument(spec.instruction),
      ],
      env: claudeEnv(spec, spec.inSandbox === true || runningAsRoot()),
      stdin: "closed",
    };
  },
  collect: collectStdout,
};
