// The client's de-duplication against a stand-in coordinator that repeats results on purpose (the
// real one repeats only after a reconnect lost an acknowledgement, which no test can time).
import { afterEach, describe, expect, test } from "bun:test";
import { TrainerToCoordinator, TRAINER_PROTOCOL_VERSION, type StreamedResult } from "../../protocol/trainer-stream.ts";
import { TrainerClient } from "./trainer-client.ts";

const result = (id: string): StreamedResult => ({
  result_id: id,
  group_id: "g",
  rollout_id: `r-${id}`,
  status: "COMPLETED",
  reward: 1,
  traces: [],
  policy_version_started: 0,
  policy_versions: [0],
  stale: false,
  timing: {},
  node_id: "n",
  error: null,
  metadata: {},
});

/**
 * A coordinator stand-in: welcomes, then sends `ids` as results in order — all at once, or `paced`:
 * the next one once a credit frame came back for the last (the client acknowledges per turn of its
 * event loop, so pacing makes each result its own turn) — and records what the client sends.
 */
function standIn(ids: string[], paced = false) {
  const queue = [...ids];
  const received: TrainerToCoordinator[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("upgrade", { status: 426 })),
    websocket: {
      message(ws, data) {
        const message = TrainerToCoordinator.parse(JSON.parse(String(data)));
        received.push(message);
        const sendNext = () => queue.length > 0 && ws.send(JSON.stringify({ type: "result", result: result(queue.shift()!) }));
        if (message.type === "credit" && paced) sendNext();
        if (message.type !== "hello") return;
        ws.send(JSON.stringify({ type: "welcome", protocol_version: TRAINER_PROTOCOL_VERSION, trainer_id: message.trainer_id, policy_version: 0, unacked: 0 }));
        if (!paced) while (queue.length > 0) sendNext();
      },
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, received, stop: () => server.stop(true) };
}

const stops: Array<() => void> = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await Bun.sleep(5);
}

describe("TrainerClient de-duplication", () => {
  test("repeats are dropped and their credit returned; memory of acknowledged ids is bounded, unacknowledged ones are always kept", async () => {
    // a, b, c acknowledged at once; a repeated while remembered; d..f push a out of a window of 3; a again is new.
    const coordinator = standIn(["a", "b", "c", "a", "d", "e", "f", "a"], true);
    stops.push(coordinator.stop);
    const delivered: string[] = [];
    const client = new TrainerClient({ url: coordinator.url, token: "t", trainerId: "tr", ackedIdsKept: 3, onResult: (r) => void delivered.push(r.result_id) });
    stops.push(() => client.close());
    await until(() => delivered.length + client.counts.duplicates === 8);
    expect(delivered).toEqual(["a", "b", "c", "d", "e", "f", "a"]);
    expect(client.counts).toEqual({ results: 7, duplicates: 1 });
    expect(client.rememberedIds).toBe(3);
    const credits = () => coordinator.received.filter((m) => m.type === "credit").map((m) => (m as { n: number }).n);
    await until(() => credits().length === 9); // the window, then one back per frame, repeats included
    expect(credits().slice(1)).toEqual(Array(8).fill(1));
  }, 30_000);

  test("without auto-acknowledgement a repeat of an unacknowledged result is dropped but not acknowledged for the caller", async () => {
    const coordinator = standIn(["a", "a"]);
    stops.push(coordinator.stop);
    const delivered: string[] = [];
    const client = new TrainerClient({ url: coordinator.url, token: "t", trainerId: "tr", autoAck: false, onResult: (r) => void delivered.push(r.result_id) });
    stops.push(() => client.close());
    await until(() => client.counts.duplicates === 1);
    expect(delivered).toEqual(["a"]);
    client.ack(["a"]);
    // Frames arrive in order: once the caller's ack is in, any ack of the repeat would be too.
    const acks = () => coordinator.received.filter((m) => m.type === "ack");
    await until(() => acks().length > 0);
    expect(acks()).toEqual([{ type: "ack", result_ids: ["a"] }]);
    expect(client.rememberedIds).toBe(1);
  }, 30_000);
});

describe("TrainerClient acknowledgements", () => {
  test("auto-acknowledgements go out per turn: one ack frame and right after it one credit frame for as many", async () => {
    const coordinator = standIn(["a", "b", "c", "d"]);
    stops.push(coordinator.stop);
    const delivered: string[] = [];
    const client = new TrainerClient({ url: coordinator.url, token: "t", trainerId: "tr", onResult: (r) => void delivered.push(r.result_id) });
    stops.push(() => client.close());
    const acked = () => coordinator.received.flatMap((m) => (m.type === "ack" ? m.result_ids : []));
    await until(() => acked().length === 4);
    expect(acked()).toEqual(["a", "b", "c", "d"]);
    await until(() => coordinator.received.at(-1)?.type === "credit");
    // After the hello and the window: (ack of k ids, credit k) pairs, however the turns fell.
    const after = coordinator.received.slice(2);
    expect(coordinator.received.slice(0, 2).map((m) => m.type)).toEqual(["hello", "credit"]);
    expect(after.length % 2).toBe(0);
    for (let i = 0; i < after.length; i += 2) {
      const [ack, credit] = [after[i]!, after[i + 1]!];
      expect(ack.type).toBe("ack");
      expect(credit).toEqual({ type: "credit", n: (ack as { result_ids: string[] }).result_ids.length });
    }
  }, 30_000);
});
