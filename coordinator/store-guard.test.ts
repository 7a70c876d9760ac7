// A write the store refuses is tried again until it succeeds, with one "failed" and one
// "recovered" per run of failures; any other error fails the write at once; a stopping
// coordinator's refused write fails instead of waiting.
import { expect, test } from "bun:test";
import { StoreGuard, type StoreFailure } from "./store-guard.ts";

function sqliteFull(): Error {
  return Object.assign(new Error("database or disk is full"), { name: "SQLiteError", code: "SQLITE_FULL" });
}

function guard() {
  const seen: string[] = [];
  const store = new StoreGuard(
    {
      failed: (failure: StoreFailure, code) => seen.push(`failed ${code} ${failure.description}`),
      recovered: (_failure: StoreFailure, retries) => seen.push(`recovered after ${retries}`),
    },
    5,
  );
  return { store, seen };
}

test("a refused write is retried until the store takes it; failing says why meanwhile", async () => {
  const { store, seen } = guard();
  let attempts = 0;
  const failingDuring: (StoreFailure | null)[] = [];
  const value = await store.run(async () => {
    failingDuring.push(store.failing);
    if (++attempts < 4) throw new Error("Failed query: insert …", { cause: sqliteFull() });
    return "stored";
  });
  expect(value).toBe("stored");
  expect(attempts).toBe(4);
  expect(failingDuring[0]).toBeNull();
  expect(failingDuring[3]?.description).toBe("SQLITE_FULL: database or disk is full");
  expect(store.failing).toBeNull();
  expect(seen).toEqual(["failed SQLITE_FULL SQLITE_FULL: database or disk is full", "recovered after 3"]);
});

test("any other error fails the write at once, and a stopped guard no longer waits", async () => {
  const { store, seen } = guard();
  await expect(store.run(async () => Promise.reject(new TypeError("a bug")))).rejects.toThrow("a bug");
  expect(seen).toEqual([]);
  let attempts = 0;
  const pending = store.run(async () => {
    attempts++;
    throw sqliteFull();
  });
  store.stop();
  await expect(pending).rejects.toThrow("database or disk is full");
  expect(attempts).toBeLessThanOrEqual(2);
});
