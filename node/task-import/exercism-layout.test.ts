// The Exercism layout reader: file roles from .meta/config.json (conventions without it), the
// statement assembled in Exercism's order, test modules, and input that must be refused.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { exerciseRoles, problemStatement, readExercises, testModules, type Exercise } from "./exercism-layout.ts";

const tmp = mkdtempSync(join(tmpdir(), "polar-layout-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function writeFolder(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

const config = (files: Record<string, string[]>) => JSON.stringify({ authors: [], files });

function errorOf(fn: () => unknown): PolarError {
  try {
    fn();
  } catch (err) {
    if (err instanceof PolarError) return err;
    throw err;
  }
  throw new Error("expected a PolarError");
}

describe("exercise roles", () => {
  test("come from .meta/config.json: solution and editor given to the agent, every test file hidden, the example mapped onto the stub", () => {
    const exercise: Exercise = {
      slug: "pay-io",
      origin: "test",
      files: {
        ".meta/config.json": config({
          solution: ["pay_io.py"],
          test: ["pay_io_test.py", "test_utils.py"],
          example: [".meta/example.py"],
          editor: ["helpers.py"],
        }),
        ".meta/example.py": "x = 1\n",
        "pay_io.py": "x = 0\n",
        "helpers.py": "",
        "pay_io_test.py": "",
        "test_utils.py": "",
      },
    };
    const roles = exerciseRoles(exercise);
    expect(roles).toEqual({
      solution: ["pay_io.py"],
      editor: ["helpers.py"],
      test: ["pay_io_test.py", "test_utils.py"],
      example: [{ path: ".meta/example.py", solves: "pay_io.py" }],
    });
    // The helper is imported by the tests, not run as a test module of its own... unless named like one.
    expect(testModules(roles)).toEqual(["pay_io_test", "test_utils"]);
    expect(testModules({ ...roles, test: ["pay_io_test.py", "fixtures.py"] })).toEqual(["pay_io_test"]);
  });

  test("without .meta/config.json the track's conventions name the files", () => {
    const roles = exerciseRoles({ slug: "two-fer", origin: "test", files: { "two_fer.py": "", "two_fer_test.py": "", ".meta/example.py": "" } });
    expect(roles).toEqual({ solution: ["two_fer.py"], editor: [], test: ["two_fer_test.py"], example: [{ path: ".meta/example.py", solves: "two_fer.py" }] });
  });

  test("several reference files map onto the solution files by name; a missing declared file or one that is both test and stub is refused", () => {
    const files = { "a.py": "", "b.py": "", "t_test.py": "", ".meta/a.py": "", ".meta/b.py": "" };
    const roles = exerciseRoles({
      slug: "ab",
      origin: "ab",
      files: { ...files, ".meta/config.json": config({ solution: ["a.py", "b.py"], test: ["t_test.py"], example: [".meta/b.py", ".meta/a.py"] }) },
    });
    expect(roles.example).toEqual([
      { path: ".meta/b.py", solves: "b.py" },
      { path: ".meta/a.py", solves: "a.py" },
    ]);
    expect(
      errorOf(() =>
        exerciseRoles({
          slug: "ab",
          origin: "ab",
          files: { ...files, ".meta/config.json": config({ solution: ["a.py"], test: ["gone_test.py"], example: [".meta/a.py"] }) },
        }),
      ).message,
    ).toContain("test file gone_test.py is missing");
    expect(
      errorOf(() =>
        exerciseRoles({
          slug: "ab",
          origin: "ab",
          files: { ...files, ".meta/config.json": config({ solution: ["a.py"], test: ["a.py"], example: [".meta/a.py"] }) },
        }),
      ).message,
    ).toContain("both a test file and a file the agent is given");
    expect(
      errorOf(() =>
        exerciseRoles({
          slug: "ab",
          origin: "ab",
          files: { ...files, ".meta/config.json": config({ solution: ["../escape.py"], test: ["t_test.py"], example: [".meta/a.py"] }) },
        }),
      ).message,
    ).toContain("not a relative path inside the exercise folder");
  });
});

describe("problem statement", () => {
  test("introduction, instructions and the Python-track appends in Exercism's order, then which file to change", () => {
    const exercise: Exercise = {
      slug: "two-fer",
      origin: "test",
      files: {
        ".docs/instructions.append.md": '# Instructions append\n\nRaise `ValueError("no")`.\n',
        ".docs/instructions.md": "# Instructions\n\nSay hello.\n",
        ".docs/introduction.md": "# Introduction\n\nA story.\n",
        ".docs/hints.md": "# Hints\n\nnot part of the statement\n",
        "two_fer.py": "",
        "two_fer_test.py": "",
        ".meta/example.py": "",
      },
    };
    const statement = problemStatement(exercise, exerciseRoles(exercise));
    const order = ["# Introduction", "# Instructions\n", "# Instructions append", "## Your task"].map((h) => statement.indexOf(h));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(statement).toContain('Raise `ValueError("no")`.');
    expect(statement).toContain("`two_fer.py`");
    expect(statement).not.toContain("not part of the statement");
    expect(errorOf(() => problemStatement({ ...exercise, files: { "two_fer.py": "" } }, exerciseRoles(exercise))).message).toContain(
      ".docs/instructions.md is missing",
    );
  });
});

describe("reading exercises", () => {
  test("a folder of exercise folders, one exercise folder, or a bundle — the same exercises, sorted by slug, caches left out", () => {
    const files = {
      ".docs/instructions.md": "# Instructions\n",
      "two_fer.py": "def two_fer(): pass\n",
      "two_fer_test.py": "import unittest\n",
      ".meta/example.py": "x = 1\n",
    };
    const root = join(tmp, "practice");
    writeFolder(join(root, "two-fer"), { ...files, "__pycache__/two_fer.cpython-311.pyc": "junk" });
    writeFolder(join(root, "bob"), { ".docs/instructions.md": "# Bob\n", "bob.py": "", "bob_test.py": "", ".meta/example.py": "" });
    mkdirSync(join(root, "not-an-exercise"));
    const fromFolder = readExercises(root);
    expect(fromFolder.map((e) => e.slug)).toEqual(["bob", "two-fer"]);
    expect(fromFolder[1]!.files).toEqual(files);
    expect(readExercises(join(root, "two-fer")).map((e) => e.files)).toEqual([files]);
    const bundle = join(tmp, "bundle.jsonl");
    writeFileSync(bundle, `${JSON.stringify({ slug: "two-fer", files })}\n\n${JSON.stringify({ slug: "bob", files: fromFolder[0]!.files })}\n`);
    expect(readExercises(bundle).map((e) => [e.slug, e.files])).toEqual(fromFolder.map((e) => [e.slug, e.files]));
  });

  test("bad bundles are refused with the line: not JSON, a bad slug, a path leaving the folder, a slug twice", () => {
    const cases: [string, string][] = [
      ["{not json", "bundle.jsonl:1: not JSON"],
      [JSON.stringify({ slug: "Two Fer", files: {} }), "lower-case letters"],
      [JSON.stringify({ slug: "x", files: { "/etc/passwd": "" } }), "not a relative path"],
      [`${JSON.stringify({ slug: "x", files: {} })}\n${JSON.stringify({ slug: "x", files: {} })}`, "exercise x appears twice"],
    ];
    for (const [text, message] of cases) {
      const path = join(tmp, "bundle.jsonl");
      writeFileSync(path, text);
      expect(errorOf(() => readExercises(path)).message).toContain(message);
    }
    expect(errorOf(() => readExercises(join(tmp, "nothing-here"))).code).toBe("not_found");
  });
});
