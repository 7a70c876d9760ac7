// Why: upload sources are host paths named by a task; under an operator's roots each one must be
// inside them when it is read, not only when it was checked. Every file and folder is opened
// without following a final symlink, the opened descriptor's real path is checked against the
// roots, and a folder's entries are reached through its open descriptor (/proc/self/fd/N/name,
// an openat), so a folder swapped for a symlink between check and copy leaks nothing.
import { constants, readlinkSync } from "node:fs";
import { lstat, open, readdir, readFile, readlink, type FileHandle } from "node:fs/promises";
import { PolarError } from "../../protocol/errors.ts";
import { resolveHostPath, withinRoots, type SandboxPolicy } from "./sandbox-policy.ts";
import { packDirectory, packEntries, type TarEntry } from "./tar.ts";

type Roots = SandboxPolicy["hostPathRoots"];

const NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The real path of an allowed host source; forbidden (naming the path, nothing of its content) otherwise. */
function allowedRealPath(path: string, roots: readonly string[], what: string): string {
  const resolved = resolveHostPath(path, roots);
  if ("refusal" in resolved) throw new PolarError("forbidden", `${what} ${path}: ${resolved.refusal}`);
  return resolved.real;
}

/**
 * Opens without following a final symlink; the descriptor's real path must lie in the roots
 * (re-checked on what was opened, whatever the path pointed at when it was checked).
 */
export async function openWithin(path: string, flags: number, roots: Roots, what: string, shown: string): Promise<FileHandle> {
  const handle = await open(path, flags).catch(async (err: NodeJS.ErrnoException) => {
    const link = err.code === "ELOOP" || (err.code === "ENOTDIR" && (await lstat(path).catch(() => null))?.isSymbolicLink());
    if (link) throw new PolarError("forbidden", `${what} ${shown}: a symlink is not followed`);
    if (err.code === "ENOTDIR") throw new PolarError("not_found", `${what} ${shown} is not a folder`);
    throw new PolarError("not_found", `${what} ${shown} cannot be read`);
  });
  if (!withinRoots(readlinkSync(`/proc/self/fd/${handle.fd}`), roots)) {
    await handle.close();
    throw new PolarError("forbidden", `${what} ${shown}: host path leads outside the folders this node's operator allows`);
  }
  return handle;
}

async function readRegular(handle: FileHandle, what: string, shown: string): Promise<Uint8Array> {
  if (!(await handle.stat()).isFile()) throw new PolarError("forbidden", `${what} ${shown}: not a regular file`);
  return new Uint8Array(await handle.readFile());
}

/** The bytes of one regular host file inside the roots ("any": read as named, symlinks followed). */
export async function readHostFile(path: string, roots: Roots, what: string): Promise<Uint8Array> {
  if (roots === "any") {
    return readFile(path).catch(() => {
      throw new PolarError("not_found", `${what} ${path} cannot be read`);
    });
  }
  const handle = await openWithin(allowedRealPath(path, roots, what), NO_FOLLOW, roots, what, path);
  try {
    return await readRegular(handle, what, path);
  } finally {
    await handle.close();
  }
}

/**
 * A tar of a host folder inside the roots, entries named relative to it ("any": as named). Symlinks
 * in it are copied as symlinks (they resolve inside the sandbox, never on the host); sockets,
 * fifos and devices are skipped.
 */
export async function packHostDirectory(path: string, roots: Roots, what: string): Promise<Uint8Array> {
  if (roots === "any") return packDirectory(path);
  const real = allowedRealPath(path, roots, what);
  const entries: TarEntry[] = [];
  async function walk(dir: FileHandle, relative: string): Promise<void> {
    const at = `/proc/self/fd/${dir.fd}`;
    for (const name of (await readdir(at)).sort()) {
      const rel = relative ? `${relative}/${name}` : name;
      const info = await lstat(`${at}/${name}`);
      const mode = info.mode & 0o7777;
      if (info.isSymbolicLink()) entries.push({ name: rel, type: "symlink", linkname: await readlink(`${at}/${name}`), mode });
      else if (info.isDirectory()) {
        entries.push({ name: rel, type: "directory", mode });
        const child = await openWithin(`${at}/${name}`, NO_FOLLOW | constants.O_DIRECTORY, roots, what, `${path}/${rel}`);
        try {
          await walk(child, rel);
        } finally {
          await child.close();
        }
      } else if (info.isFile()) {
        const file = await openWithin(`${at}/${name}`, NO_FOLLOW, roots, what, `${path}/${rel}`);
        try {
          entries.push({ name: rel, type: "file", content: await readRegular(file, what, `${path}/${rel}`), mode });
        } finally {
          await file.close();
        }
      }
    }
  }
  const top = await openWithin(real, NO_FOLLOW | constants.O_DIRECTORY, roots, what, path);
  try {
    await walk(top, "");
  } finally {
    await top.close();
  }
  return packEntries(entries);
}
