// Why: `polar tasks validate FILE` — check a task file the SWE-bench way (gold → 1, unmodified
// → 0) in real sandboxes of the chosen runtime, print a table, exit non-zero on any failure.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Task } from "../../protocol/task.ts";
import { type FlagSpecs, UsageError, intFlag, oneOf, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { openRuntime, RUNTIME_BACKENDS, runtimeChoices } from "../runtime/registry.ts";
import { RequirementCheck } from "./requirements.ts";
import { runtimeSource } from "./sandbox-source.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import { validateTasks, type TaskValidation } from "./validate.ts";

const SUMMARY = "validate a task file: every gold patch must give reward 1 and every unmodified repository reward 0";
const FLAGS: FlagSpecs = {
  runtime: { type: "string", help: `sandbox runtime: ${runtimeChoices()}`, default: "docker" },
  only: { type: "string", help: "comma-separated task ids to validate (default: all)" },
  concurrency: { type: "string", help: "tasks validated at once", default: "2" },
  json: { type: "boolean", help: "print one JSON object per task instead of the table" },
};

/** A task file, or every *.jsonl file in a folder (`polar tasks validate tasks/`). */
function taskFiles(path: string): string[] {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file or folder`);
  if (!statSync(path).isDirectory()) return [path];
  const files = readdirSync(path)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => join(path, f));
  if (files.length === 0) throw new UsageError(`${path}: no .jsonl task files in this folder`);
  return files;
}

function row(r: TaskValidation): string {
  const reward = (x: number | null) => (x === null ? "-" : String(x));
  return `${r.task_id.padEnd(40)} ${reward(r.gold_reward).padStart(4)} ${reward(r.empty_reward).padStart(5)}  ${(r.ok ? "ok" : "FAIL").padEnd(4)} ${(r.duration_ms / 1000).toFixed(1).padStart(6)}s${r.problem ? `  ${r.problem}` : ""}`;
}

async function validate(argv: string[]): Promise<void> {
  const file = argv[0];
  if (!file || file.startsWith("-"))
    throw new UsageError(`usage: polar tasks validate FILE|FOLDER [--runtime ${RUNTIME_BACKENDS.join("|")}] [--only ids] [--concurrency N] [--json]`);
  const values = parseFlags("tasks validate", SUMMARY, FLAGS, argv.slice(1));
  if (!values) return;
  const backend = oneOf(values, "runtime", RUNTIME_BACKENDS) ?? "docker";
  const only = stringFlag(values, "only")
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const json = values.json === true;
  const loaded = { tasks: [] as Task[], issues: 0 };
  for (const path of taskFiles(file)) {
    const one = await loadTaskFile(path);
    for (const issue of one.issues) console.error(`${path}:${issue.line}: ${issue.field || "(row)"}: ${issue.message}`);
    loaded.tasks.push(...one.tasks);
    loaded.issues += one.issues.length;
  }
  const tasks = only ? loaded.tasks.filter((t) => only.includes(t.task_id)) : loaded.tasks;
  const runtime = await openRuntime(backend, { allowUnisolated: true });
  const nodeId = `polar-validate-${randomBytes(4).toString("hex")}`;
  if (!json) console.log(`${"task".padEnd(40)} gold empty  ok    time   (${tasks.length} tasks, runtime ${backend})`);
  try {
    const source = runtimeSource(runtime, nodeId);
    const results = await validateTasks(tasks, {
      source,
      requirements: new RequirementCheck({ source, backend }),
      concurrency: intFlag(values, "concurrency") ?? 2,
      onResult: (r) => {
        const { gold: _gold, empty: _empty, ...summary } = r;
        console.log(json ? JSON.stringify(summary) : row(r));
      },
    });
    const failed = results.filter((r) => !r.ok).length;
    const unevaluable = results.filter((r) => !r.evaluable).length;
    if (!json) {
      const notes = [
        ...(unevaluable ? [`${unevaluable} cannot be evaluated on this host`] : []),
        ...(loaded.issues ? [`${loaded.issues} malformed row issue(s)`] : []),
      ];
      console.log(`${results.length - failed}/${results.length} tasks valid${notes.length ? `, ${notes.join(", ")}` : ""}`);
    }
    if (failed > 0 || loaded.issues > 0 || tasks.length === 0) process.exitCode = 1;
  } finally {
    await runtime.removeLeftovers(nodeId).catch(() => undefined);
  }
}

export async function runTasksCli(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "validate") return validate(rest);
  if (sub === "import") return (await import("../task-import/cli.ts")).runImportCli(rest);
  throw new UsageError(
    `usage: polar tasks validate FILE|FOLDER [--runtime docker|process]\n       polar tasks import exercism FILE|DIR [--out tasks.jsonl]${sub && sub !== "--help" ? `\nunknown subcommand "${sub}"` : ""}`,
  );
}
