// Why: `polar mock-engine` — run the vLLM/SGLang-compatible mock engine from a shell (demo,
// manual tests, harness experiments). Flags map one to one onto MockEngineOptions.
import { existsSync } from "node:fs";
import { type FlagSpecs, UsageError, intFlag, numberFlag, oneOf, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { ENGINE_APIS, MockEngineOptionsSchema, type MockEngineOptionsInput } from "./options.ts";
import { loadScriptFile } from "./script.ts";
import { startMockEngine } from "./server.ts";

const SUMMARY = "a vLLM-compatible (or SGLang-compatible) engine with the real Qwen3 tokenizer and chat template and a scripted, deterministic policy";

/** The defaults the options schema applies, so --help shows what really happens. */
const DEFAULTS = MockEngineOptionsSchema.parse({});

const FLAGS: FlagSpecs = {
  host: { type: "string", help: "listen address", default: DEFAULTS.host },
  port: { type: "string", help: "listen port, 0 = any free port", default: String(DEFAULTS.port) },
  model: { type: "string", help: "served model name", default: DEFAULTS.model },
  "model-folder": { type: "string", help: "HF folder with tokenizer.json + tokenizer_config.json (default: bundled Qwen3)" },
  "max-model-len": { type: "string", help: "context window in tokens", default: String(DEFAULTS.maxModelLen) },
  seed: { type: "string", help: "engine seed for the pseudo-random logprobs", default: String(DEFAULTS.seed) },
  script: { type: "string", help: 'policy script file {"steps":[{"think"?,"shell"?,"text"?}]}' },
  tasks: { type: "string", help: "task file (JSONL, e.g. tasks/tasks.jsonl): solve its tasks when a prompt holds a problem statement" },
  "success-probability": {
    type: "string",
    help: "chance a task session applies the gold patch (else a wrong fix)",
    default: String(DEFAULTS.successProbability),
  },
  "ttft-ms": { type: "string", help: "delay before the first token", default: String(DEFAULTS.ttftMs) },
  "ms-per-token": { type: "string", help: "delay per generated token", default: String(DEFAULTS.msPerToken) },
  "fail-first": { type: "string", help: "answer HTTP 500 to the first n generation calls", default: String(DEFAULTS.failFirst) },
  "hang-calls": { type: "string", help: "comma-separated call numbers that never answer (e.g. 2,5)" },
  dialect: { type: "string", help: `API to speak: ${ENGINE_APIS.join(" | ")}`, default: DEFAULTS.dialect },
  trainable: {
    type: "boolean",
    help: "task sessions choose solve / mis-solve from trainable logits starting at --success-probability (GET/POST /polar/policy)",
  },
  "policy-token": { type: "string", help: "bearer token for POST /polar/policy weight updates (env POLAR_ENGINE_POLICY_TOKEN; needed with --trainable)" },
};

/** Options from argv; null after printing help for `--help`. */
export function parseMockEngineArgs(argv: string[]): MockEngineOptionsInput | null {
  const values = parseFlags("mock-engine", SUMMARY, FLAGS, argv);
  if (!values) return null;
  const dialect = oneOf(values, "dialect", ENGINE_APIS);
  const script = stringFlag(values, "script");
  const options: MockEngineOptionsInput = {
    host: stringFlag(values, "host"),
    port: intFlag(values, "port"),
    model: stringFlag(values, "model"),
    modelFolder: stringFlag(values, "model-folder"),
    maxModelLen: intFlag(values, "max-model-len"),
    seed: intFlag(values, "seed"),
    script: script !== undefined ? readScript(script) : undefined,
    tasks: taskFile(stringFlag(values, "tasks")),
    successProbability: numberFlag(values, "success-probability"),
    ttftMs: numberFlag(values, "ttft-ms"),
    msPerToken: numberFlag(values, "ms-per-token"),
    failFirst: intFlag(values, "fail-first"),
    hangCalls: stringFlag(values, "hang-calls")
      ?.split(",")
      .filter((s) => s.trim() !== "")
      .map((s) => intFlag({ "hang-calls": s.trim() }, "hang-calls")!),
    dialect,
    trainable: values.trainable === true ? true : undefined,
    policyToken: stringFlag(values, "policy-token") ?? process.env.POLAR_ENGINE_POLICY_TOKEN,
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as MockEngineOptionsInput;
}

/** Entry point of `polar mock-engine`: serves until SIGINT/SIGTERM. */
export async function runMockEngineCli(argv: string[]): Promise<void> {
  const parsed = parseMockEngineArgs(argv);
  if (!parsed) return;
  const engine = await startMockEngine(parsed);
  process.stdout.write(`mock engine (${parsed.dialect ?? "vllm"}) listening on ${engine.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => void engine.stop().then(resolve);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

function taskFile(path: string | undefined): string | undefined {
  if (path !== undefined && !existsSync(path)) throw new UsageError(`--tasks ${path}: no such file`);
  return path;
}

function readScript(path: string): MockEngineOptionsInput["script"] {
  try {
    return loadScriptFile(path);
  } catch (err) {
    throw new UsageError(`--script ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
