// Why: any program that reads the standard OpenAI / Anthropic variables can be a harness; Polar
// only points those variables at the gateway session and runs it, unchanged.
import { PolarError } from "../../protocol/errors.ts";
import { collectStdout, options, polarEnv } from "./common.ts";
import type { HarnessAdapter, HarnessSpec } from "./types.ts";

export function commandEnv(spec: HarnessSpec): Record<string, string> {
  return {
    ...polarEnv(spec),
    OPENAI_BASE_URL: spec.gateway.openaiBaseUrl,
    OPENAI_API_KEY: spec.gateway.token,
    ANTHROPIC_BASE_URL: spec.gateway.anthropicBaseUrl,
    ANTHROPIC_API_KEY: spec.gateway.token,
  };
}

export const commandAdapter: HarnessAdapter = {
  kind: "command",
  async prepare(spec) {
    const argv = options(spec).argv;
    if (!argv) throw new PolarError("bad_request", "the command harness needs options.argv");
    return { command: [...argv, ...(options(spec).extraArgs ?? [])], env: commandEnv(spec), stdin: "closed", files: {}, dirs: [spec.homeDir] };
  },
  collect: collectStdout,
};
