import { describe, expect, test } from "bun:test";
import { EventBus } from "./events.ts";

interface TestEvents {
  moved: { id: string; to: string };
  other: { n: number };
}

describe("EventBus", () => {
  test("a throwing listener is reported with the event's name; every other listener still runs and emit does not throw", () => {
    const failures: { event: string; message: string }[] = [];
    const bus = new EventBus<TestEvents>((event, err) => void failures.push({ event, message: (err as Error).message }));
    const seen: string[] = [];
    bus.on("moved", () => {
      throw new Error("listener bug");
    });
    bus.on("moved", (e) => void seen.push(`second:${e.to}`));
    bus.onAny((name, payload) => void seen.push(`any:${String(name)}:${JSON.stringify(payload)}`));
    expect(() => bus.emit("moved", { id: "r1", to: "run" })).not.toThrow();
    expect(seen).toEqual(["second:run", 'any:moved:{"id":"r1","to":"run"}']);
    expect(failures).toEqual([{ event: "moved", message: "listener bug" }]);
  });

  test("listeners get only their event and stop when unsubscribed; has() says whether anyone listens", () => {
    const bus = new EventBus<TestEvents>();
    const got: number[] = [];
    expect(bus.has("other")).toBe(false);
    const off = bus.on("other", (e) => void got.push(e.n));
    expect(bus.has("other")).toBe(true);
    expect(bus.has("moved")).toBe(false);
    bus.emit("moved", { id: "x", to: "y" });
    bus.emit("other", { n: 1 });
    off();
    bus.emit("other", { n: 2 });
    expect(got).toEqual([1]);
  });

  test("an error sink that itself throws does not escape either", () => {
    const bus = new EventBus<TestEvents>(() => {
      throw new Error("sink broken");
    });
    bus.on("other", () => {
      throw new Error("listener bug");
    });
    expect(() => bus.emit("other", { n: 1 })).not.toThrow();
  });
});
