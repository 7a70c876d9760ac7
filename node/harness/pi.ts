// Why: Pi reads its providers from $PI_CODING_AGENT_DIR/models.json; Polar declares one provider
// ("polar") pointing at the gateway in the chosen dialect. `--offline` stops its startup network
// operations, `--no-session` keeps session files out of the config dir.
import { join } from "node:path";
import { collectStdout, maxRetries, options, polarEnv, specBinary } from "./common.ts";
import { promptArgument } from "./prompt-arg.ts";
import type { HarnessAdapter, HarnessDialect, HarnessSpec } from "./types.ts";

const PROVIDER_ID = "polar";
const API_KEY_ENV = "POLAR_API_KEY";
const PI_API: Record<HarnessDialect, string> = {
  chat: "openai-completions",
  responses: "openai-responses",
  anthropic: "anthropic-messages",
};

export function piModelsJson(spec: HarnessSpec): unknown {
  const opts = options(spec);
  const dialect = opts.dialect ?? "chat";
  return {
    providers: {
      [PROVIDER_ID]: {
        baseUrl: dialect === "anthropic" ? spec.gateway.anthropicBaseUrl : spec.gateway.openaiBaseUrl,
        api: PI_API[dialect],
        apiKey: API_KEY_ENV, // the name of the variable holding the session token
        models: [
          {
            id: spec.model,
            reasoning: false,
            input: ["text"],
            contextWindow: opts.contextWindow ?? 128000,
            maxTokens: opts.maxOutputTokens ?? 16384,
          },
        ],
      },
    },
  };
}

export function piSettingsJson(spec: HarnessSpec): unknown {
  const retries = maxRetries(spec);
  return {
    enableInstallTelemetry: false,
    quietStartup: true,
    retry: { enabled: retries > 0, maxRetries: retries, provider: { maxRetries: 0 } },
  };
}

export const piAdapter: HarnessAdapter = {
  kind: "pi",
  async prepare(spec) {
    const agentDir = join(spec.homeDir, ".pi", "agent");
    return {
      files: {
        [join(agentDir, "models.json")]: JSON.stringify(piModelsJson(spec), null, 2),
        [join(agentDir, "settings.json")]: JSON.stringify(piSettingsJson(spec), null, 2),
      },
      dirs: [],
      command: [
        specBinary("pi", spec),
        "-p",
        "--offline",
        "--no-session",
        "--provider",
        PROVIDER_ID,
        "--model",
        spec.model,
        ...(options(spec).extraArgs ?? []),
        promptArgument(spec.instruction),
      ],
      env: {
        ...polarEnv(spec),
        PI_CODING_AGENT_DIR: agentDir,
        PI_OFFLINE: "1",
        [API_KEY_ENV]: spec.gateway.token,
      },
      stdin: "closed",
    };
  },
  collect: collectStdout,
};
