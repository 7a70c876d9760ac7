// Why: Qwen Code speaks any of the three dialects (`--auth-type`); Chat Completions is its best
// tested path and the default here. A private QWEN_HOME holds settings that stop update checks
// and the usage-statistics upload (its only outbound traffic besides model calls).
import { join } from "node:path";
import { collectStdout, maxRetries, options, polarEnv, specBinary } from "./common.ts";
import { promptArgument } from "./prompt-arg.ts";
import type { HarnessAdapter, HarnessDialect, HarnessSpec } from "./types.ts";

const AUTH_TYPE: Record<HarnessDialect, string> = {
  chat: "openai",
  responses: "openai-responses",
  anthropic: "anthropic",
};

export function qwenSettings(spec: HarnessSpec): unknown {
  const opts = options(spec);
  return {
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: {
      generationConfig: {
        maxRetries: maxRetries(spec),
        ...(opts.contextWindow === undefined ? {} : { contextWindowSize: opts.contextWindow }),
        ...(opts.maxOutputTokens === undefined ? {} : { samplingParams: { max_tokens: opts.maxOutputTokens } }),
      },
    },
  };
}

export function qwenEnv(spec: HarnessSpec): Record<string, string> {
  const dialect = options(spec).dialect ?? "chat";
  const endpoint: Record<string, string> =
    dialect === "anthropic"
      ? {
          ANTHROPIC_BASE_URL: spec.gateway.anthropicBaseUrl,
          ANTHROPIC_API_KEY: spec.gateway.token,
          ANTHROPIC_MODEL: spec.model,
        }
      : {
          OPENAI_BASE_URL: spec.gateway.openaiBaseUrl,
          OPENAI_API_KEY: spec.gateway.token,
          OPENAI_MODEL: spec.model,
        };
  return {
    ...polarEnv(spec),
    ...endpoint,
    QWEN_HOME: join(spec.homeDir, ".qwen"),
    QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
  };
}

export const qwenCodeAdapter: HarnessAdapter = {
  kind: "qwen-code",
  async prepare(spec) {
    const maxTurns = spec.limits.maxTurns;
    return {
      files: { [join(spec.homeDir, ".qwen", "settings.json")]: JSON.stringify(qwenSettings(spec), null, 2) },
      dirs: [],
      command: [
        specBinary("qwen-code", spec),
        "--auth-type",
        AUTH_TYPE[options(spec).dialect ?? "chat"],
        "--approval-mode",
        "yolo",
        "--model",
        spec.model,
        ...(maxTurns === undefined ? [] : ["--max-session-turns", String(maxTurns)]),
        ...(options(spec).extraArgs ?? []),
        promptArgument(spec.instruction),
      ],
      env: qwenEnv(spec),
      stdin: "closed",
    };
  },
  collect: collectStdout,
};
