// Why: `polar generate` — flags in, a resumable output folder out, progress while it runs and a
// summary at the end (also in summary.json); Ctrl-C stops cleanly and the same command resumes.
import { join } from "node:path";
import { DEFAULT_RUNTIME, RUNTIME_BACKENDS, runtimeChoices } from "../runtime/registry.ts";
import { HARNESS_KINDS } from "../../protocol/harness-names.ts";
import { type FlagSpecs, UsageError, intFlag, numberFlag, oneOf, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { BACKEND_KINDS } from "../gateway/backends/options.ts";
import { ACCEPT_FIELDS, AcceptError, parseAccept } from "./accept.ts";
import { ATTEMPTS_FILE, SUMMARY_FILE, TRAJECTORIES_FILE } from "./output.ts";
import { formatSummary } from "./progress.ts";
import { MOCK_ENGINE, runGenerate } from "./run.ts";

const DEFAULT_ACCEPT = "reward >= 1";
const FLAGS: FlagSpecs = {
  tasks: { type: "string", help: "task file (JSONL), e.g. tasks/exercism-python/tasks.jsonl" },
  harness: {
    type: "string",
    help: `harness: ${HARNESS_KINDS.filter((h) => h !== "command").join(", ")} (or Polar's names: claude_code, qwen_code, mini_swe_agent)`,
    default: "mini",
  },
  samples: { type: "string", help: "samples per task", default: "1" },
  engine: {
    type: "string",
    help: `endpoint base URL (no /v1), or "${MOCK_ENGINE}" for the built-in mock engine with its task-solving policy`,
    default: MOCK_ENGINE,
  },
  backend: {
    type: "string",
    help: `how to talk to it: ${BACKEND_KINDS.join(" | ")} (openai and anthropic return no token ids: rows get the chat view only)`,
    default: "vllm",
  },
  model: { type: "string", help: "model name sent to the endpoint (default: the one model it lists)" },
  accept: {
    type: "string",
    help: `which attempts become rows, e.g. 'reward >= 1 && turns <= 30' (fields: ${Object.keys(ACCEPT_FIELDS).join(", ")})`,
    default: DEFAULT_ACCEPT,
  },
  out: { type: "string", help: `output folder: ${TRAJECTORIES_FILE}, ${ATTEMPTS_FILE}, ${SUMMARY_FILE}; rerun the same command to resume` },
  dedup: {
    type: "string",
    help: "drop accepted attempts of a task nearly identical to an earlier one: Jaccard threshold of their assistant turns' word 3-grams, e.g. 0.9 (1: identical only)",
  },
  runtime: { type: "string", help: `sandbox runtime: ${runtimeChoices()}`, default: DEFAULT_RUNTIME },
  concurrency: { type: "string", help: "harnesses running at once", default: "4" },
  only: { type: "string", help: "comma-separated task ids (default: every task of the file)" },
  "max-tokens-cap": { type: "string", help: "cap on every call's max_tokens (default 4096 with the mock engine, none otherwise)" },
  temperature: { type: "string", help: "sampling temperature for every call (default: what the harness asks)" },
  "timeout-seconds": { type: "string", help: "limit per rollout (sandbox, harness, evaluation)", default: "600" },
  "mock-success-probability": { type: "string", help: "with --engine mock: share of sessions that apply the gold patch", default: "0.5" },
  "mock-seed": { type: "string", help: "with --engine mock: the policy's seed", default: "0" },
};
const SUMMARY =
  "offline trajectories and SFT data: rollouts through the node's pipeline against any OpenAI- or Anthropic-compatible endpoint (or the mock engine), accepted ones written as chat + token rows";

export async function runGenerateCli(argv: string[]): Promise<void> {
  const flags = parseFlags("generate", SUMMARY, FLAGS, argv);
  if (!flags) return;
  const tasksFile = stringFlag(flags, "tasks");
  const out = stringFlag(flags, "out");
  if (!tasksFile || !out)
    throw new UsageError(
      "usage: polar generate --tasks FILE --out DIR [--harness H] [--samples K] [--engine URL|mock] [--backend openai|vllm|sglang|anthropic] [--accept EXPR]",
    );
  const accept = stringFlag(flags, "accept") ?? DEFAULT_ACCEPT;
  try {
    parseAccept(accept);
  } catch (err) {
    if (err instanceof AcceptError) throw new UsageError(`--accept: ${err.message}`);
    throw err;
  }
  const dedupRaw = numberFlag(flags, "dedup");
  if (dedupRaw !== undefined && !(dedupRaw > 0 && dedupRaw <= 1)) throw new UsageError("--dedup expects a threshold in (0, 1]");
  const samples = intFlag(flags, "samples") ?? 1;
  const concurrency = intFlag(flags, "concurrency") ?? 4;
  if (samples < 1 || concurrency < 1) throw new UsageError("--samples and --concurrency must be at least 1");
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    console.error("\npolar generate: stopping (finished attempts are kept; run the same command to resume; Ctrl-C again to quit now)");
    controller.abort();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    const summary = await runGenerate({
      tasksFile,
      harness: stringFlag(flags, "harness") ?? "mini",
      samples,
      engine: stringFlag(flags, "engine") ?? MOCK_ENGINE,
      backend: oneOf(flags, "backend", BACKEND_KINDS) ?? "vllm",
      model: stringFlag(flags, "model"),
      apiKey: process.env.POLAR_ENGINE_API_KEY,
      accept,
      out,
      runtime: oneOf(flags, "runtime", RUNTIME_BACKENDS) ?? DEFAULT_RUNTIME,
      concurrency,
      dedup: dedupRaw ?? null,
      only: stringFlag(flags, "only")
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      maxTokensCap: intFlag(flags, "max-tokens-cap"),
      temperature: numberFlag(flags, "temperature"),
      timeoutSeconds: numberFlag(flags, "timeout-seconds") ?? 600,
      mock: { successProbability: numberFlag(flags, "mock-success-probability") ?? 0.5, seed: intFlag(flags, "mock-seed") ?? 0 },
      signal: controller.signal,
    });
    console.log(`\n${formatSummary(summary)}\n→ ${join(out, TRAJECTORIES_FILE)} (${join(out, SUMMARY_FILE)})`);
    if (controller.signal.aborted) process.exitCode = 130;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
