import { describe, expect, test } from "bun:test";
import { engineBaseUrl, EnginePool } from "./engine-pool.ts";

const A = "http://127.0.0.1:1001";
const B = "http://127.0.0.1:1002";

function pool(now: { t: number }) {
  return new EnginePool([A, `${B}/`], { downMs: 1000, maxSessions: 3, now: () => now.t });
}

describe("EnginePool", () => {
  test("new sessions go to the engine with fewest in-flight calls, then fewest sessions", () => {
    const p = pool({ t: 0 });
    const s1 = p.acquire("s1");
    expect(s1.url).toBe(A);
    const s2 = p.acquire("s2");
    expect(s2.url).toBe(B); // A has one call in flight
    s1.release();
    s2.release();
    const s3 = p.acquire("s3");
    expect(s3.url).toBe(A); // both idle and holding one session each: configured order
    s3.release();
    expect(p.load()).toEqual({ [A]: 0, [B]: 0 });
  });

  test("a session sticks to its engine even when that engine is busier", () => {
    const p = pool({ t: 0 });
    p.acquire("s1").release();
    const busy1 = p.acquire("other1");
    const busy2 = p.acquire("s1");
    expect(busy1.url).toBe(B);
    expect(busy2.url).toBe(A);
    const again = p.acquire("s1");
    expect(again.url).toBe(A);
    expect(p.load()[A]).toBe(2);
  });

  test("an engine marked down loses its sessions until the down period ends", () => {
    const now = { t: 0 };
    const p = pool(now);
    p.acquire("s1").release();
    expect(p.engineOf("s1")).toBe(A);
    p.markDown(A);
    expect(p.acquire("s1").url).toBe(B);
    expect(p.engineOf("s1")).toBe(B);
    now.t = 2000;
    // A is healthy again, but s1 now lives on B and stays there.
    expect(p.acquire("s1").url).toBe(B);
  });

  test("when every engine is down, the one that comes back first is tried", () => {
    const now = { t: 0 };
    const p = pool(now);
    p.markDown(A);
    now.t = 10;
    p.markDown(B);
    expect(p.acquire("s").url).toBe(A);
  });

  test("calls of no session (model listing) are not remembered and do not weigh on routing", () => {
    const p = pool({ t: 0 });
    const listing = p.acquire(null);
    expect(listing.url).toBe(A);
    listing.release();
    // A holds no session: the first session still goes to A, the configured first engine.
    expect(p.acquire("s1").url).toBe(A);
    expect(p.acquire(null).url).toBe(B); // A has a call in flight
  });

  test("engine URLs are base URLs: trailing slashes and /v1 are dropped", () => {
    expect(engineBaseUrl("http://127.0.0.1:8000/v1/")).toBe("http://127.0.0.1:8000");
    expect(engineBaseUrl("http://127.0.0.1:8000//")).toBe("http://127.0.0.1:8000");
    expect(new EnginePool([`${A}/v1`], { downMs: 0, maxSessions: 1 }).urls).toEqual([A]);
  });

  test("release is idempotent", () => {
    const p = pool({ t: 0 });
    const lease = p.acquire("s");
    lease.release();
    lease.release();
    expect(p.load()[A]).toBe(0);
  });

  test("sticky memory is bounded; the least recently used session is dropped", () => {
    const p = pool({ t: 0 });
    for (const s of ["s1", "s2", "s3"]) p.acquire(s).release();
    p.acquire("s1").release(); // refresh s1
    p.acquire("s4").release();
    expect(p.engineOf("s2")).toBeUndefined();
    expect(p.engineOf("s1")).toBeDefined();
  });

  test("setUrls keeps surviving engines' state and moves sessions of removed ones", () => {
    const p = pool({ t: 0 });
    const held = p.acquire("s1");
    expect(held.url).toBe(A);
    p.setUrls([B, "http://127.0.0.1:1003"]);
    expect(p.urls).toEqual([B, "http://127.0.0.1:1003"]);
    expect(p.acquire("s1").url).toBe(B);
  });
});
