// Why: Bun's allocator (mimalloc) gives freed pages back to the kernel at every collection Bun
// forces, and a gateway moves ~1 MB of buffers per 100 KB LLM call (request, engine body, engine
// answer), so the next call faults the same pages in again: 40% of the gateway's CPU was kernel
// time (bench/RESULTS.md, "Gateway CPU per call"). MIMALLOC_PURGE_DELAY=-1 keeps freed pages for
// reuse (RSS stays at its high-water mark instead of shrinking after a burst) and halves the CPU
// per call. mimalloc reads it once, when the process starts, so a server command re-executes
// itself with it: execve(2) through libc keeps the pid (supervisors, `kill -9` and the leftover
// checks see one process) and the exact command line, Bun's own flags included.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";

export const PURGE_DELAY_ENV = "MIMALLOC_PURGE_DELAY";
/**
 * Bun flags that start JSC's sampling profiler, which suspends threads with SIGPWR: one sent as
 * execve runs stays pending into the new image and kills it before Bun installs its handler.
 */
const SAMPLER_FLAGS = ["--cpu-prof", "--inspect"];

/** A NULL-terminated `char *[]` over `values`, and the buffers it points into (kept alive until execve). */
function cStringArray(values: readonly string[]): { table: BigUint64Array; buffers: Buffer[] } {
  const buffers = values.map((value) => Buffer.from(`${value}\0`));
  const table = new BigUint64Array(buffers.length + 1);
  buffers.forEach((buffer, i) => (table[i] = BigInt(ptr(buffer))));
  return { table, buffers };
}

/**
 * Re-executes this process with MIMALLOC_PURGE_DELAY=-1 unless the variable is already set (the
 * operator's value wins; `MIMALLOC_PURGE_DELAY=10` restores mimalloc's default). Returns only
 * when nothing was done — the variable is set, a profiler runs (set it yourself to profile what
 * runs in production), execve is unavailable (not Linux/glibc) — and the process runs on.
 */
export function reexecWithAllocatorOptions(): void {
  if (process.env[PURGE_DELAY_ENV] !== undefined || process.platform !== "linux") return;
  if (process.execArgv.some((flag) => SAMPLER_FLAGS.some((sampler) => flag.startsWith(sampler)))) return;
  let argv: string[];
  let execve: (path: number, argv: number, envp: number) => number;
  try {
    argv = readFileSync("/proc/self/cmdline", "utf8").split("\0").slice(0, -1);
    execve = dlopen("libc.so.6", { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } }).symbols.execve as never;
  } catch {
    return;
  }
  const path = Buffer.from(`${process.execPath}\0`);
  const args = cStringArray(argv);
  const env = cStringArray([...Object.entries(process.env).map(([name, value]) => `${name}=${value}`), `${PURGE_DELAY_ENV}=-1`]);
  execve(ptr(path), ptr(args.table), ptr(env.table));
  // Only reached when execve failed: run on with the allocator's defaults.
}
