// Why: Bun's allocator (mimalloc) gives freed pages back to the kernel 10 ms after they are freed
// (and at every collection Bun forces), and a gateway moves hundreds of KB of buffers per 100 KB
// LLM call, so the next call faults the same pages in again: 40% of the gateway's CPU was kernel
// time (bench/RESULTS.md, "Gateway CPU per call"). Never returning them (`-1`) halved the CPU per
// call but made RSS a high-water mark that every burst ratcheted up (330–350 MiB under
// gateway-cpu.ts's load, "Gateway memory"). Since a call allocates less (prompt ids in one growing
// buffer per session, no answer string, messages shared with the previous call), a delay of a
// second costs little: pages freed and reused within a second stay, the pile left after a burst
// goes back — ~200 MiB peak at the CPU per call of a69cf43, which purged at 10 ms. mimalloc reads
// the setting once, when the process starts, so a server command re-executes itself with it:
// execve(2) through libc keeps the pid (supervisors, `kill -9` and the leftover checks see one
// process) and the exact command line, Bun's own flags included.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";

export const PURGE_DELAY_ENV = "MIMALLOC_PURGE_DELAY";
/** Milliseconds mimalloc keeps a freed page before handing it back to the kernel (its default: 10). */
export const PURGE_DELAY_MS = "1000";
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
 * Re-executes this process with MIMALLOC_PURGE_DELAY=PURGE_DELAY_MS unless the variable is already
 * set (the operator's value wins: `-1` never returns pages, `10` is mimalloc's default). Returns only
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
  const env = cStringArray([...Object.entries(process.env).map(([name, value]) => `${name}=${value}`), `${PURGE_DELAY_ENV}=${PURGE_DELAY_MS}`]);
  execve(ptr(path), ptr(args.table), ptr(env.table));
  // Only reached when execve failed: run on with the allocator's defaults.
}
