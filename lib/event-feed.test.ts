import { expect, test } from "bun:test";
import { EventFeed, readFeed, type ParsedFrame } from "./event-feed.ts";

function serve(feed: EventFeed) {
  return Bun.serve({ port: 0, fetch: (req) => feed.response(req.signal, req.headers.get("last-event-id")) });
}

test("frames in upstream's shape: hello first, then events with increasing ids, pings as heartbeat", async () => {
  const feed = new EventFeed({ heartbeatMs: 50 });
  const server = serve(feed);
  try {
    const frames: ParsedFrame[] = [];
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reading = readFeed(res.body!, (f) => {
      frames.push(f);
      return frames.filter((x) => x.type === "ping").length >= 2;
    });
    while (feed.readerCount === 0) await Bun.sleep(5);
    feed.publish("task.created", { task_id: "t" });
    feed.publish("task.completed", { task_id: "t", status: "completed" });
    await reading;
    expect(frames[0]!.type).toBe("hello");
    const named = frames.filter((f) => f.type.startsWith("task."));
    expect(named.map((f) => [f.id, f.type, f.data])).toEqual([
      [1, "task.created", { task_id: "t" }],
      [2, "task.completed", { task_id: "t", status: "completed" }],
    ]);
    expect(Number.isNaN(Date.parse(named[0]!.ts))).toBe(false);
  } finally {
    server.stop(true);
  }
});

test("Last-Event-ID replays what was kept after it; a reader that stops reading is cut off, not buffered forever", async () => {
  const feed = new EventFeed({ keep: 3, heartbeatMs: 60_000, maxQueuedBytes: 64 * 1024 });
  for (let i = 1; i <= 5; i++) feed.publish("e", { i });
  expect(feed.since(0).map((e) => e.id)).toEqual([3, 4, 5]);
  const server = serve(feed);
  try {
    const frames: ParsedFrame[] = [];
    const res = await fetch(`http://127.0.0.1:${server.port}/`, { headers: { "last-event-id": "3" } });
    await readFeed(res.body!, (f) => (frames.push(f), frames.length === 3));
    expect(frames.map((f) => f.id)).toEqual([null, 4, 5]);

    const stalled = await fetch(`http://127.0.0.1:${server.port}/`);
    while (feed.readerCount === 0) await Bun.sleep(5);
    const big = "x".repeat(16 * 1024);
    for (let i = 0; i < 2000 && feed.readerCount > 0; i++) {
      feed.publish("big", { big });
      if (i % 50 === 0) await Bun.sleep(1);
    }
    expect(feed.readerCount).toBe(0);
    await stalled.body?.cancel();
  } finally {
    server.stop(true);
  }
});
