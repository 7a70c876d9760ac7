import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstLine, PolarProcesses } from "../test/helpers/polar-processes.ts";
import { PURGE_DELAY_ENV, PURGE_DELAY_MS } from "./allocator-options.ts";

const processes = new PolarProcesses();
const dirs: string[] = [];
afterEach(async () => {
  await processes.killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts `polar gateway` with MIMALLOC_PURGE_DELAY at `purgeDelay` (or unset) and returns its environment once it serves `/health`. */
async function gatewayEnvironment(purgeDelay: string | undefined): Promise<Map<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), "polar-allocator-"));
  dirs.push(dir);
  const inherited = process.env[PURGE_DELAY_ENV];
  delete process.env[PURGE_DELAY_ENV];
  const child = processes.spawn(
    ["gateway", "--port", "0", "--engine", "http://127.0.0.1:9", "--model", "m", "--db", join(dir, "g.db"), "--admin-token", "allocator-test-admin-token"],
    purgeDelay === undefined ? {} : { [PURGE_DELAY_ENV]: purgeDelay },
  );
  if (inherited !== undefined) process.env[PURGE_DELAY_ENV] = inherited;
  const line = await firstLine(child.stderr as ReadableStream<Uint8Array>);
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
  expect((await fetch(`${url}/health`)).status).toBe(200);
  // The pid Bun.spawn returned is the process serving: the re-execution kept it.
  return new Map(
    readFileSync(`/proc/${child.pid}/environ`, "latin1")
      .split("\0")
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)] as [string, string]),
  );
}

describe.if(process.platform === "linux")("polar gateway's allocator setting", () => {
  test("the gateway runs, under the pid it was started with, with mimalloc's purge delay of a second", async () => {
    expect((await gatewayEnvironment(undefined)).get(PURGE_DELAY_ENV)).toBe(PURGE_DELAY_MS);
  }, 30_000);

  test("an operator's own value is kept", async () => {
    expect((await gatewayEnvironment("10")).get(PURGE_DELAY_ENV)).toBe("10");
  }, 30_000);
});
