// Why: Exercism exercises arrive as a bundle (one JSON line per exercise, every file of its
// upstream folder unedited) or as folders in the track's layout; both are read here into one
// shape, and each file's role — the stub the student edits, read-only helpers, the tests, the
// reference solution — comes from the exercise's `.meta/config.json` ("files": solution, editor,
// test, example), with the track's naming conventions only where that file is missing.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, posix, relative } from "node:path";
import { z } from "zod";
import { PolarError } from "../../protocol/errors.ts";

/** One exercise: its slug and every file of its folder (path relative to the folder → text). */
export interface Exercise {
  slug: string;
  files: Record<string, string>;
  /** Where it came from (`bundle.jsonl:12`, a folder path), for messages. */
  origin: string;
}

/** File roles, as `.meta/config.json` names them. */
export interface ExerciseRoles {
  /** The stub(s) the agent edits. */
  solution: string[];
  /** Read-only support files the agent is given. */
  editor: string[];
  /** Hidden test files (helpers included), run by the evaluator only. */
  test: string[];
  /** Reference solution files, each mapped onto the solution file it solves. */
  example: { path: string; solves: string }[];
}

/** Statement files in the order Exercism assembles an exercise's README. */
const STATEMENT_FILES = [".docs/introduction.md", ".docs/introduction.append.md", ".docs/instructions.md", ".docs/instructions.append.md"];
const SLUG = /^[a-z0-9][a-z0-9-]*$/;
/** Files a folder read never takes: caches and VCS data a local checkout may hold. */
const SKIPPED_NAMES = new Set([".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"]);
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FILES = 500;

const BundleLine = z.object({ slug: z.string().regex(SLUG, "lower-case letters, digits and '-'"), files: z.record(z.string(), z.string()) });

const MetaConfig = z.looseObject({
  files: z
    .looseObject({
      solution: z.array(z.string()).default([]),
      test: z.array(z.string()).default([]),
      example: z.array(z.string()).default([]),
      editor: z.array(z.string()).default([]),
    })
    .optional(),
});

/** A relative path that stays inside the exercise folder; anything else is refused. */
function checkedPath(path: string, origin: string): string {
  const normal = posix.normalize(path);
  if (path === "" || posix.isAbsolute(path) || normal.startsWith("../") || normal === ".." || path.includes("\\") || path.includes("\0")) {
    throw new PolarError("bad_request", `${origin}: file path "${path}" is not a relative path inside the exercise folder`);
  }
  return normal;
}

function checkedFiles(files: Record<string, string>, origin: string): Record<string, string> {
  const entries = Object.entries(files);
  if (entries.length > MAX_FILES) throw new PolarError("bad_request", `${origin}: more than ${MAX_FILES} files`);
  return Object.fromEntries(entries.map(([path, text]) => [checkedPath(path, origin), text]));
}

function readBundle(path: string): Exercise[] {
  const exercises: Exercise[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((raw, index) => {
      if (raw.trim() === "") return;
      const origin = `${path}:${index + 1}`;
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch (err) {
        throw new PolarError("bad_request", `${origin}: not JSON: ${(err as Error).message}`);
      }
      const line = BundleLine.safeParse(json);
      if (!line.success) throw new PolarError("bad_request", `${origin}: ${z.prettifyError(line.error)}`);
      exercises.push({ slug: line.data.slug, files: checkedFiles(line.data.files, origin), origin });
    });
  return exercises;
}

function readFolderFiles(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (SKIPPED_NAMES.has(entry.name) || entry.name.endsWith(".pyc")) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        if (statSync(full).size > MAX_FILE_BYTES) throw new PolarError("bad_request", `${full}: larger than ${MAX_FILE_BYTES} bytes`);
        files[relative(root, full).split("\\").join("/")] = readFileSync(full, "utf8");
        if (Object.keys(files).length > MAX_FILES) throw new PolarError("bad_request", `${root}: more than ${MAX_FILES} files`);
      }
    }
  };
  walk(root);
  return files;
}

function isExerciseFolder(dir: string): boolean {
  return existsSync(join(dir, ".meta")) || existsSync(join(dir, ".docs"));
}

/**
 * Exercises from a bundle file (`exercises.jsonl`), one exercise folder, or a folder of them
 * (`exercises/practice/`): sorted by slug, whichever way they came.
 */
export function readExercises(path: string): Exercise[] {
  if (!existsSync(path)) throw new PolarError("not_found", `${path}: no such file or folder`);
  let exercises: Exercise[];
  if (!statSync(path).isDirectory()) exercises = readBundle(path);
  else if (isExerciseFolder(path)) exercises = [{ slug: basename(path), files: readFolderFiles(path), origin: path }];
  else {
    exercises = readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isDirectory() && isExerciseFolder(join(path, e.name)))
      .map((e) => ({ slug: e.name, files: readFolderFiles(join(path, e.name)), origin: join(path, e.name) }));
  }
  if (exercises.length === 0)
    throw new PolarError("bad_request", `${path}: no exercises (expected a bundle of {"slug","files"} lines or folders with .docs/ and .meta/)`);
  for (const e of exercises) if (!SLUG.test(e.slug)) throw new PolarError("bad_request", `${e.origin}: "${e.slug}" is not an exercise slug`);
  const seen = new Set<string>();
  for (const e of exercises) {
    if (seen.has(e.slug)) throw new PolarError("bad_request", `${e.origin}: exercise ${e.slug} appears twice`);
    seen.add(e.slug);
  }
  return exercises.sort((a, b) => a.slug.localeCompare(b.slug));
}

/** Python module name of a slug: the track names the stub `<snake_slug>.py`. */
export function snakeSlug(slug: string): string {
  return slug.replaceAll("-", "_");
}

/** An example file onto its solution file: the only one, or the one with the same base name. */
function mapExamples(examples: string[], solution: string[], origin: string): ExerciseRoles["example"] {
  if (examples.length === 0) throw new PolarError("bad_request", `${origin}: no reference solution (files.example)`);
  if (solution.length === 1 && examples.length === 1) return [{ path: examples[0]!, solves: solution[0]! }];
  return examples.map((path) => {
    const solves = solution.find((s) => posix.basename(s) === posix.basename(path));
    if (!solves) throw new PolarError("bad_request", `${origin}: reference file ${path} matches none of the solution files ${solution.join(", ")}`);
    return { path, solves };
  });
}

/** The roles of an exercise's files (`.meta/config.json`, else the Python track's conventions). */
export function exerciseRoles(exercise: Exercise): ExerciseRoles {
  const { files, origin } = exercise;
  let declared: z.infer<typeof MetaConfig>["files"];
  const configText = files[".meta/config.json"];
  if (configText !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(configText);
    } catch (err) {
      throw new PolarError("bad_request", `${origin}: .meta/config.json is not JSON: ${(err as Error).message}`);
    }
    const parsed = MetaConfig.safeParse(json);
    if (!parsed.success) throw new PolarError("bad_request", `${origin}: .meta/config.json: ${z.prettifyError(parsed.error)}`);
    declared = parsed.data.files;
  }
  const module = snakeSlug(exercise.slug);
  const solution = (declared?.solution.length ? declared.solution : [`${module}.py`]).map((p) => checkedPath(p, origin));
  const test = (declared?.test.length ? declared.test : [`${module}_test.py`]).map((p) => checkedPath(p, origin));
  const example = (declared?.example.length ? declared.example : [".meta/example.py"]).map((p) => checkedPath(p, origin));
  const editor = (declared?.editor ?? []).map((p) => checkedPath(p, origin));
  for (const [role, paths] of [
    ["solution", solution],
    ["test", test],
    ["example", example],
    ["editor", editor],
  ] as const) {
    for (const path of paths) if (files[path] === undefined) throw new PolarError("bad_request", `${origin}: ${role} file ${path} is missing`);
  }
  const overlap = test.filter((p) => solution.includes(p) || editor.includes(p));
  if (overlap.length > 0) throw new PolarError("bad_request", `${origin}: ${overlap.join(", ")} is both a test file and a file the agent is given`);
  return { solution, editor, test, example: mapExamples(example, solution, origin) };
}

/** Test modules `python3 -m unittest` runs: the test files named like tests (helpers are only imported). */
export function testModules(roles: ExerciseRoles): string[] {
  const modules = roles.test
    .filter((p) => p.endsWith(".py") && (posix.basename(p).endsWith("_test.py") || posix.basename(p).startsWith("test_")))
    .map((p) => p.slice(0, -3).split("/").join("."));
  return modules.length > 0 ? modules : roles.test.filter((p) => p.endsWith(".py")).map((p) => p.slice(0, -3).split("/").join("."));
}

/**
 * The problem statement: introduction, instructions and their Python-track appends (which say
 * which exceptions and messages the tests expect), then which files to change.
 */
export function problemStatement(exercise: Exercise, roles: ExerciseRoles): string {
  if (exercise.files[".docs/instructions.md"] === undefined) throw new PolarError("bad_request", `${exercise.origin}: .docs/instructions.md is missing`);
  const parts = STATEMENT_FILES.map((p) => exercise.files[p]?.trim()).filter((t): t is string => t !== undefined && t !== "");
  const code = (paths: string[]) => paths.map((p) => `\`${p}\``).join(", ");
  const editing = `Write your solution in ${code(roles.solution)}`;
  const helpers =
    roles.editor.length > 0 ? ` (${code(roles.editor)} ${roles.editor.length === 1 ? "is a helper" : "are helpers"} you may read but not change)` : "";
  const footer =
    `${editing}${helpers}, in this repository. Hidden unit tests (Python's standard-library \`unittest\`) import ${roles.solution.length === 1 ? "it" : "them"}: ` +
    "keep the names of the existing functions and classes. Use only the Python standard library.";
  return `${parts.join("\n\n")}\n\n## Your task\n\n${footer}\n`;
}
