// Upload sources read under an operator's roots: allowed files and folders arrive whole; a file
// or folder that is (or has become) a path out of the roots is refused, with nothing read.
import { afterAll, expect, test } from "bun:test";
import { constants, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tarStream from "tar-stream";
import { PolarError } from "../../protocol/errors.ts";
import { openWithin, packHostDirectory, readHostFile } from "./host-sources.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "polar-sources-")));
const root = join(base, "tasks");
const outside = join(base, "outside");
mkdirSync(join(root, "repo", "pkg"), { recursive: true });
mkdirSync(outside);
writeFileSync(join(root, "repo", "pkg", "mod.py"), "print('in')\n");
writeFileSync(join(root, "single.txt"), "single");
writeFileSync(join(outside, "secret.txt"), "HOST-SECRET");
symlinkSync(outside, join(root, "repo", "link-out"));
symlinkSync(join(root, "single.txt"), join(root, "alias.txt"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const roots = [root];

async function refusal(work: Promise<unknown>): Promise<PolarError> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PolarError);
  expect((err as PolarError).message).not.toContain("HOST-SECRET");
  return err as PolarError;
}

async function entries(tar: Uint8Array): Promise<Record<string, string>> {
  const extract = tarStream.extract();
  const found: Record<string, string> = {};
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      found[entry.header.name] =
        entry.header.type === "symlink" ? `-> ${entry.header.linkname}` : entry.header.type === "directory" ? "dir" : Buffer.concat(chunks).toString();
    }
  })();
  extract.end(Buffer.from(tar));
  await done;
  return found;
}

test("files inside the roots are read, through an in-root symlink too", async () => {
  expect(Buffer.from(await readHostFile(join(root, "single.txt"), roots, "upload_file source")).toString()).toBe("single");
  expect(Buffer.from(await readHostFile(join(root, "alias.txt"), roots, "upload_file source")).toString()).toBe("single");
});

test("/proc/self/environ, a host file and a symlink out of the root are refused (forbidden)", async () => {
  expect((await refusal(readHostFile("/proc/self/environ", roots, "upload_file source"))).code).toBe("forbidden");
  expect((await refusal(readHostFile(join(outside, "secret.txt"), roots, "upload_file source"))).code).toBe("forbidden");
  expect((await refusal(readHostFile(join(root, "repo", "link-out", "secret.txt"), roots, "upload_file source"))).message).toContain("through a symlink");
  expect((await refusal(readHostFile(join(root, "repo"), roots, "upload_file source"))).message).toContain("not a regular file");
});

test("a folder inside the roots is packed whole; a symlink in it is copied as a link, never followed", async () => {
  const packed = await entries(await packHostDirectory(join(root, "repo"), roots, "upload_dir source"));
  expect(packed).toEqual({ pkg: "dir", "pkg/mod.py": "print('in')\n", "link-out": `-> ${outside}` });
});

test("folders outside the roots, or reached through a symlink out of them, are refused", async () => {
  expect((await refusal(packHostDirectory(outside, roots, "upload_dir source"))).code).toBe("forbidden");
  expect((await refusal(packHostDirectory(join(root, "repo", "link-out"), roots, "upload_dir source"))).code).toBe("forbidden");
  expect((await refusal(packHostDirectory("/proc/self", roots, "upload_dir source"))).code).toBe("forbidden");
});

test("what is opened is re-checked: a path that points out of the roots when it is opened is refused", async () => {
  // As if the check had passed and the folder were swapped for a symlink before the copy: the
  // descriptor's real path is outside, so nothing is read.
  const swapped = join(base, "swapped");
  symlinkSync(outside, swapped);
  expect(
    (await refusal(openWithin(join(swapped, "secret.txt"), constants.O_RDONLY | constants.O_NOFOLLOW, roots, "upload_file source", "x"))).message,
  ).toContain("outside");
  expect(
    (await refusal(openWithin(swapped, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY, roots, "upload_dir source", "x"))).message,
  ).toContain("symlink is not followed");
});

test("'any' roots (a trusted caller) read as named", async () => {
  expect(Buffer.from(await readHostFile(join(outside, "secret.txt"), "any", "upload_file source")).toString()).toBe("HOST-SECRET");
  expect(Object.keys(await entries(await packHostDirectory(outside, "any", "upload_dir source")))).toEqual(["secret.txt"]);
});
