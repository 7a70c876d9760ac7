// Why: Codex CLI speaks only the Responses API. A custom `model_providers` entry makes it use
// plain HTTP (the built-in provider tries a WebSocket first and retries forever offline), and
// the config below turns off every side channel (plugins sync, apps, analytics, update checks).
import { join } from "node:path";
import { collectStdout, maxRetries, options, polarEnv, specBinary } from "./common.ts";
import { promptArgument } from "./prompt-arg.ts";
import type { HarnessAdapter, HarnessSpec } from "./types.ts";

const PROVIDER_ID = "polar";
const API_KEY_ENV = "POLAR_API_KEY";

/** A TOML basic string: JSON's escapes are valid TOML, except DEL must be escaped too. */
function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\x7f/g, "\\u007f");
}

export function codexConfigToml(spec: HarnessSpec): string {
  const opts = options(spec);
  const retries = maxRetries(spec);
  return [
    `model = ${tomlString(spec.model)}`,
    ...(opts.contextWindow === undefined ? [] : [`model_context_window = ${opts.contextWindow}`]),
    `model_provider = "${PROVIDER_ID}"`,
    `approval_policy = "never"`,
    `sandbox_mode = "danger-full-access"`, // Polar provides the sandbox
    `check_for_update_on_startup = false`,
    `web_search = "disabled"`,
    ``,
    `[model_providers.${PROVIDER_ID}]`,
    `name = "Polar gateway"`,
    `base_url = ${tomlString(spec.gateway.openaiBaseUrl)}`,
    `env_key = "${API_KEY_ENV}"`,
    `wire_api = "responses"`,
    `request_max_retries = ${retries}`,
    `stream_max_retries = ${retries}`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[feedback]`,
    `enabled = false`,
    ``,
    `[otel]`,
    `exporter = "none"`,
    ``,
    `[history]`,
    `persistence = "none"`,
    ``,
    `[features]`,
    `plugins = false`,
    `remote_plugin = false`,
    `apps = false`,
    `goals = false`,
    ``,
    `[agents]`,
    `enabled = false`,
    ``,
  ].join("\n");
}

export const codexAdapter: HarnessAdapter = {
  kind: "codex",
  async prepare(spec) {
    const codexHome = join(spec.homeDir, ".codex");
    return {
      files: { [join(codexHome, "config.toml")]: codexConfigToml(spec) },
      dirs: [],
      command: [
        specBinary("codex", spec),
        "exec",
        "--ephemeral",
        "--skip-git-repo-check",
        "--color",
        "never",
        "--cd",
        spec.workDir,
        ...(options(spec).extraArgs ?? []),
        promptArgument(spec.instruction),
      ],
      env: { ...polarEnv(spec), CODEX_HOME: codexHome, [API_KEY_ENV]: spec.gateway.token },
      stdin: "closed",
    };
  },
  collect: collectStdout,
};
