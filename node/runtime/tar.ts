// Why: Docker moves files in and out of containers only as tar archives (putArchive /
// getArchive); this module builds them from memory or a host folder and reads one file back,
// with tar-stream so that no host `tar` binary or temp file is involved.
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import * as tarStream from "tar-stream";
import { PolarError } from "../../protocol/errors.ts";

export interface TarEntry {
  /** Path inside the archive, without a leading slash. */
  name: string;
  type: "file" | "directory" | "symlink";
  content?: Uint8Array;
  linkname?: string;
  mode: number;
}

export async function packEntries(entries: TarEntry[]): Promise<Uint8Array> {
  const pack = tarStream.pack();
  const collected = collect(pack);
  for (const entry of entries) {
    await new Promise<void>((resolve, reject) => {
      const header = { name: entry.name, type: entry.type, mode: entry.mode, uid: 0, gid: 0, mtime: new Date(), linkname: entry.linkname };
      const done = (err?: Error | null) => (err ? reject(err) : resolve());
      if (entry.type === "file") pack.entry(header, entry.content ?? new Uint8Array(), done);
      else pack.entry(header, done);
    });
  }
  pack.finalize();
  return collected;
}

/** Every file, folder and symlink under `hostDir`, named relative to it (`./` not included). */
export async function packDirectory(hostDir: string): Promise<Uint8Array> {
  const top = await lstat(hostDir).catch(() => null);
  if (!top?.isDirectory()) throw new PolarError("not_found", `${hostDir} is not a folder`);
  const entries: TarEntry[] = [];
  async function walk(relative: string): Promise<void> {
    const names = (await readdir(join(hostDir, relative))).sort();
    for (const name of names) {
      const rel = relative ? `${relative}/${name}` : name;
      const path = join(hostDir, rel);
      const info = await lstat(path);
      const mode = info.mode & 0o7777;
      if (info.isSymbolicLink()) entries.push({ name: rel, type: "symlink", linkname: await readlink(path), mode });
      else if (info.isDirectory()) {
        entries.push({ name: rel, type: "directory", mode });
        await walk(rel);
      } else if (info.isFile()) entries.push({ name: rel, type: "file", content: await readFile(path), mode });
      // sockets, fifos and devices are not copied
    }
  }
  await walk("");
  return packEntries(entries);
}

/** The content of the first regular file in a tar archive (Docker's archive of one file). */
export async function firstFileIn(tar: Uint8Array, what: string): Promise<Uint8Array> {
  const extract = tarStream.extract();
  const done = (async () => {
    let found: Uint8Array | undefined;
    for await (const entry of extract) {
      const bytes = await collect(entry);
      if (found === undefined && entry.header.type === "file") found = bytes;
    }
    return found;
  })();
  extract.end(Buffer.from(tar));
  const found = await done;
  if (found === undefined) throw new PolarError("not_found", `${what} is not a regular file`);
  return found;
}

export async function collect(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
