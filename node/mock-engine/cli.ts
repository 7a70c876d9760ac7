// Why: `polar mock-engine` — run the vLLM/SGLang-compatible mock engine from a shell (demo,
// manual tests, harness experiments). Flags map one to one onto MockEngineOptions.
import { parseArgs } from "node:util";
import { DIALECTS, type MockEngineOptionsInput } from "./options.ts";
import { loadScriptFile } from "./script.ts";
import { startMockEngine } from "./server.ts";

export const MOCK_ENGINE_HELP = `polar mock-engine — a vLLM-compatible (or SGLang-compatible) engine with the real Qwen3
tokenizer and chat template and a scripted, deterministic policy.

Options:
  --host <addr>            listen address (default 127.0.0.1)
  --port <n>               listen port, 0 = any free port (default 8000)
  --model <name>           served model name (default Qwen/Qwen3-8B)
  --model-folder <dir>     HF folder with tokenizer.json + tokenizer_config.json (default: bundled Qwen3)
  --max-model-len <n>      context window in tokens (default 40960)
  --seed <n>               engine seed for the pseudo-random logprobs (default 0)
  --script <file.json>     policy script {"steps":[{"think"?,"shell"?,"text"?}]}
  --ttft-ms <ms>           delay before the first token (default 0)
  --ms-per-token <ms>      delay per generated token (default 0)
  --fail-first <n>         answer HTTP 500 to the first n generation calls
  --hang-calls <list>      comma-separated call numbers that never answer (e.g. 2,5)
  --dialect <vllm|sglang>  API to speak (default vllm)
  --help                   show this help
`;

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new Error(`--${name} expects a number, got ${JSON.stringify(value)}`);
  return n;
}

export function parseMockEngineArgs(argv: string[]): MockEngineOptionsInput | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      help: { type: "boolean" },
      host: { type: "string" },
      port: { type: "string" },
      model: { type: "string" },
      "model-folder": { type: "string" },
      "max-model-len": { type: "string" },
      seed: { type: "string" },
      script: { type: "string" },
      "ttft-ms": { type: "string" },
      "ms-per-token": { type: "string" },
      "fail-first": { type: "string" },
      "hang-calls": { type: "string" },
      dialect: { type: "string" },
    },
  });
  if (values.help) return "help";
  const dialect = values.dialect;
  if (dialect !== undefined && !(DIALECTS as readonly string[]).includes(dialect)) {
    throw new Error(`--dialect must be one of ${DIALECTS.join(", ")}`);
  }
  const options: MockEngineOptionsInput = {
    host: values.host,
    port: integer("port", values.port),
    model: values.model,
    modelFolder: values["model-folder"],
    maxModelLen: integer("max-model-len", values["max-model-len"]),
    seed: integer("seed", values.seed),
    script: values.script !== undefined ? loadScriptFile(values.script) : undefined,
    ttftMs: integer("ttft-ms", values["ttft-ms"]),
    msPerToken: integer("ms-per-token", values["ms-per-token"]),
    failFirst: integer("fail-first", values["fail-first"]),
    hangCalls: values["hang-calls"]?.split(",").filter((s) => s.trim() !== "").map((s) => integer("hang-calls", s.trim())!),
    dialect: dialect as MockEngineOptionsInput["dialect"],
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as MockEngineOptionsInput;
}

/** Entry point of `polar mock-engine`: serves until SIGINT/SIGTERM. */
export async function runMockEngineCli(argv: string[]): Promise<void> {
  const parsed = parseMockEngineArgs(argv);
  if (parsed === "help") {
    process.stdout.write(MOCK_ENGINE_HELP);
    return;
  }
  const engine = await startMockEngine(parsed);
  process.stdout.write(`mock engine (${parsed.dialect ?? "vllm"}) listening on ${engine.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => void engine.stop().then(resolve);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
