// Why: `polar tasks import exercism FILE|DIR` — turn Exercism Python exercises (the bundle or
// folders in the upstream layout) into a Polar task file, running the hidden tests in sandboxes
// of the chosen runtime to find the test lists; progress per exercise, skipped ones with why.
import { randomBytes } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { type FlagSpecs, UsageError, intFlag, oneOf, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { DEFAULT_RUNTIME, openRuntime, RUNTIME_BACKENDS, runtimeChoices } from "../runtime/registry.ts";
import { runtimeSource } from "../eval/sandbox-source.ts";
import { DEFAULT_ID_PREFIX, importExercises, type ImportResult } from "./exercism-import.ts";
import { readExercises } from "./exercism-layout.ts";

const USAGE = `usage: polar tasks import exercism FILE|DIR [--out tasks.jsonl] [--runtime ${RUNTIME_BACKENDS.join("|")}] [--concurrency 2] [--only slugs] [--id-prefix P] [--no-wrong-variants] [--json]`;
const SUMMARY = "Exercism Python exercises (a bundle of {slug, files} lines, one exercise folder or a folder of them) → a Polar task file";
const FLAGS: FlagSpecs = {
  out: { type: "string", help: "task file to write (default: JSONL on stdout, progress on stderr)" },
  runtime: { type: "string", help: `sandbox runtime the tests run in to find FAIL_TO_PASS / PASS_TO_PASS: ${runtimeChoices()}`, default: DEFAULT_RUNTIME },
  concurrency: { type: "string", help: "exercises imported at once (one sandbox each)", default: "2" },
  only: { type: "string", help: "comma-separated slugs to import (default: all)" },
  "id-prefix": { type: "string", help: "task id prefix", default: DEFAULT_ID_PREFIX },
  "no-wrong-variants": { type: "boolean", help: "do not search a wrong fix (mutant of the reference solution) for the mock engine's failing sessions" },
  json: { type: "boolean", help: "progress as one JSON object per exercise" },
};

function row(r: ImportResult): string {
  const status = r.task ? "ok" : "SKIP";
  const lists = r.task ? `${String(r.fail_to_pass).padStart(4)} ${String(r.pass_to_pass).padStart(4)}` : "   -    -";
  return `${r.slug.padEnd(28)} ${status.padEnd(4)} ${lists}  ${(r.duration_ms / 1000).toFixed(1).padStart(5)}s  ${r.task ? (r.wrong_variant ?? "no wrong variant") : r.problem}`;
}

async function importExercism(argv: string[]): Promise<void> {
  const path = argv[0];
  if (!path || path.startsWith("-")) throw new UsageError(USAGE);
  const values = parseFlags("tasks import exercism", SUMMARY, FLAGS, argv.slice(1));
  if (!values) return;
  const backend = oneOf(values, "runtime", RUNTIME_BACKENDS) ?? DEFAULT_RUNTIME;
  const only = stringFlag(values, "only")
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const out = stringFlag(values, "out");
  const json = values.json === true;
  let exercises = readExercises(path);
  if (only) {
    const unknown = only.filter((slug) => !exercises.some((e) => e.slug === slug));
    if (unknown.length > 0) throw new UsageError(`--only: no exercise ${unknown.join(", ")} in ${path}`);
    exercises = exercises.filter((e) => only.includes(e.slug));
  }
  const runtime = await openRuntime(backend, { allowUnisolated: true });
  const nodeId = `polar-import-${randomBytes(4).toString("hex")}`;
  const log = (line: string) => console.error(line);
  if (!json) log(`${"exercise".padEnd(28)} ok   F2P  P2P    time  wrong variant (${exercises.length} exercises, runtime ${backend})`);
  try {
    const results = await importExercises(exercises, {
      source: runtimeSource(runtime, nodeId),
      idPrefix: stringFlag(values, "id-prefix") ?? DEFAULT_ID_PREFIX,
      wrongVariants: values["no-wrong-variants"] !== true,
      concurrency: intFlag(values, "concurrency") ?? 2,
      onResult: (r) => {
        const { task: _task, ...summary } = r;
        log(json ? JSON.stringify({ ...summary, ok: r.task !== undefined }) : row(r));
      },
    });
    const tasks = results.flatMap((r) => (r.task ? [r.task] : []));
    const text = tasks.map((t) => JSON.stringify(t)).join("\n") + (tasks.length ? "\n" : "");
    if (out) {
      const partial = `${out}.partial-${process.pid}`;
      writeFileSync(partial, text);
      renameSync(partial, out);
    } else process.stdout.write(text);
    const skipped = results.length - tasks.length;
    log(
      `${tasks.length}/${results.length} exercises imported${skipped ? `, ${skipped} skipped (reasons above)` : ""}${out ? ` → ${out}` : ""}; check them with: polar tasks validate ${out ?? "FILE"} --runtime ${backend}`,
    );
    if (tasks.length === 0) process.exitCode = 1;
  } finally {
    await runtime.removeLeftovers(nodeId).catch(() => undefined);
  }
}

export async function runImportCli(argv: string[]): Promise<void> {
  const [format, ...rest] = argv;
  if (format === "exercism") return importExercism(rest);
  throw new UsageError(`${USAGE}${format && format !== "--help" ? `\nunknown format "${format}" (known: exercism)` : ""}`);
}
