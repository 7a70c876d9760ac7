// Why: a process sandbox's files live in host folders; every put/read must map a sandbox path to
// the host folder that backs it and never follow a path (or a symlink planted by the sandboxed
// code) out of that folder.
import { constants } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import { join, posix } from "node:path";
import { PolarError } from "../../../protocol/errors.ts";

/** One sandbox folder and the host folder behind it. */
export interface PathMapping {
  sandbox: string;
  host: string;
  writable: boolean;
}

export interface ResolvedPath {
  mapping: PathMapping;
  /** Path components below the mapping's folder. */
  parts: string[];
  host: string;
}

/** A normalized absolute sandbox path, or a bad_request. */
export function normalizeSandboxPath(path: string): string {
  if (!path.startsWith("/") || path.includes("\0")) throw new PolarError("bad_request", `sandbox paths must be absolute: ${JSON.stringify(path)}`);
  const normalized = posix.normalize(path);
  return normalized.length > 1 ? normalized.replace(/\/+$/, "") : normalized;
}

const within = (path: string, folder: string) => folder === "/" || path === folder || path.startsWith(`${folder}/`);

/** The mapping with the longest sandbox folder containing `path` (mappings include "/"). */
export function resolveSandboxPath(mappings: PathMapping[], path: string): ResolvedPath {
  const normalized = normalizeSandboxPath(path);
  let best: PathMapping | undefined;
  for (const m of mappings) if (within(normalized, m.sandbox) && (!best || m.sandbox.length > best.sandbox.length)) best = m;
  if (!best) throw new PolarError("bad_request", `no sandbox folder holds ${normalized}`);
  const rest = best.sandbox === "/" ? normalized : normalized.slice(best.sandbox.length);
  const parts = rest.split("/").filter(Boolean);
  if (parts.includes("..")) throw new PolarError("bad_request", `path escapes the sandbox: ${path}`);
  return { mapping: best, parts, host: join(best.host, ...parts) };
}

/** Creates the folders of `parts` below `base` one by one, refusing symlinks on the way. */
async function mkdirNoFollow(base: string, parts: string[]): Promise<string> {
  let current = base;
  for (const part of parts) {
    current = join(current, part);
    const info = await lstat(current).catch(() => undefined);
    if (!info) await mkdir(current, { mode: 0o755 });
    else if (!info.isDirectory()) throw new PolarError("bad_request", `not a folder (or a symlink) in the sandbox: ${current}`);
  }
  return current;
}

/** Writes one file under a writable mapping; no component may be a symlink. */
export async function writeNoFollow(resolved: ResolvedPath, content: string | Uint8Array, mode: number): Promise<void> {
  if (!resolved.mapping.writable) throw new PolarError("bad_request", `read-only in the sandbox: ${resolved.mapping.sandbox}`);
  if (resolved.parts.length === 0) throw new PolarError("bad_request", "cannot write a file over a sandbox folder");
  const folder = await mkdirNoFollow(resolved.mapping.host, resolved.parts.slice(0, -1));
  const file = join(folder, resolved.parts.at(-1)!);
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, mode).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ELOOP") throw new PolarError("bad_request", `refusing to write through a symlink: ${file}`);
      throw err;
    },
  );
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/** Ensures a folder exists under a writable mapping (no symlinks followed). */
export async function mkdirSandbox(resolved: ResolvedPath): Promise<string> {
  if (!resolved.mapping.writable) throw new PolarError("bad_request", `read-only in the sandbox: ${resolved.mapping.sandbox}`);
  return mkdirNoFollow(resolved.mapping.host, resolved.parts);
}
