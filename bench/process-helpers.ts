// Why: the benchmarks that run the gateway, the engine or the coordinator as processes of their
// own need the same things — a free port, a wait until the process answers its health URL, and
// its resident memory and CPU time from /proc — written once here.
import { readFileSync } from "node:fs";

export async function freePort(): Promise<number> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port!;
  await server.stop(true);
  return port;
}

/** Polls `url` until it answers 2xx (20 s at most). */
export async function waitHealthy(url: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`${url} never became healthy`);
}

/** A process's resident set size in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line!.split(/\s+/)[1]) * 1024;
}

export const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU seconds of a process (all its threads). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command name: field 3 is state; utime and stime are fields 14 and 15 of the whole line.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}
