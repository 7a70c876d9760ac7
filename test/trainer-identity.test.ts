// A trainer proves it is the same trainer across reconnects, and sees only its own groups
// (issue 17 §1), attacked on a running coordinator (port 0, real WebSockets, its SQLite file):
// holding the trainer token, a forger says hello with a connected trainer's id (no secret, a wrong
// one, and the right one from a second connection) and, registered under its own id, tries to
// cancel the other's group. Every attempt is refused; the real trainer keeps its connection and
// receives its result; restarted with its kept secret it gets what it had not acknowledged.
import { afterEach, expect, test } from "bun:test";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import { CoordinatorToTrainer, TRAINER_PROTOCOL_VERSION, type StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, TOKENS, waitFor, type Cluster } from "./support/coordinator/cluster.ts";

const T = 60_000;
let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

async function forger(url: string, hello: Record<string, unknown>): Promise<{ ws: WebSocket; frames: CoordinatorToTrainer[]; closed: Promise<number> }> {
  const ws = new (WebSocket as any)(`${url.replace(/^http/, "ws")}/v1/trainer`, { headers: { authorization: `Bearer ${TOKENS.trainerToken}` } }) as WebSocket;
  const frames: CoordinatorToTrainer[] = [];
  const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
  ws.onmessage = (e) => void frames.push(CoordinatorToTrainer.parse(JSON.parse(String(e.data))));
  await new Promise<void>((resolve) => (ws.onopen = () => resolve()));
  ws.send(JSON.stringify({ type: "hello", protocol_version: TRAINER_PROTOCOL_VERSION, ...hello }));
  return { ws, frames, closed };
}

test(
  "a connected trainer's id cannot be taken, its groups cannot be touched by another trainer, and its secret brings it back after a restart",
  async () => {
    cluster = await startCluster();
    const node = await cluster.node("n1", { runMs: () => null });
    const results: StreamedResult[] = [];
    let issued: string | undefined;
    const owner = new TrainerClient({
      url: cluster.coordinator.url,
      token: TOKENS.trainerToken,
      trainerId: "owner",
      reconnectDelayMs: 50,
      autoAck: false,
      onSecret: (s) => void (issued = s),
      onResult: (r) => void results.push(r),
    });
    await owner.ready();
    expect(issued).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(owner.secret).toBe(issued);
    const { group_id } = await owner.submit({ task: TASK, n: 2, agent: AGENT });
    await waitFor(() => node.running.size === 2, "the group running");

    // The owner's one connection (private to the client; read here to prove it was never replaced).
    const firstConnection = (owner as unknown as { ws: WebSocket }).ws;
    const codes: number[] = [];
    for (const secret of [undefined, "y".repeat(43), issued]) {
      const f = await forger(cluster.coordinator.url, { trainer_id: "owner", ...(secret && { trainer_secret: secret }) });
      codes.push(await f.closed);
      expect(f.frames.map((m) => m.type)).toEqual(["error"]);
    }
    // No secret and a wrong one: not proven; the right one from a second connection: refused, not preferred.
    expect(codes).toEqual([4003, 4003, 4009]);

    // Another trainer, on its own id, cannot cancel the owner's group, and is sent nothing of it.
    const other = await forger(cluster.coordinator.url, { trainer_id: "other" });
    await waitFor(() => other.frames.some((m) => m.type === "welcome"), "the other trainer welcomed");
    other.ws.send(JSON.stringify({ type: "credit", n: 100 }));
    other.ws.send(JSON.stringify({ type: "cancel_group", group_id }));
    await waitFor(() => other.frames.some((m) => m.type === "error"), "the cancel answered");
    expect(other.frames.find((m) => m.type === "error")).toMatchObject({ code: "not_found" });

    expect(node.finishHeld()).toBe(2);
    await waitFor(() => results.length === 2, "the owner's results");
    expect(results.every((r) => r.group_id === group_id && r.status === "COMPLETED")).toBe(true);
    expect((owner as unknown as { ws: WebSocket }).ws).toBe(firstConnection);
    expect(firstConnection.readyState).toBe(WebSocket.OPEN);
    await Bun.sleep(200);
    expect(other.frames.filter((m) => m.type === "result" || m.type === "group")).toEqual([]);

    // The owner restarts (a new process) with its kept secret: what it had not acknowledged comes again.
    owner.close();
    const again: StreamedResult[] = [];
    const restarted = new TrainerClient({
      url: cluster.coordinator.url,
      token: TOKENS.trainerToken,
      trainerId: "owner",
      secret: issued!,
      reconnectDelayMs: 50,
      onResult: (r) => void again.push(r),
    });
    await restarted.ready();
    await waitFor(() => again.length === 2, "the unacknowledged results again");
    expect(again.map((r) => r.result_id).sort()).toEqual(results.map((r) => r.result_id).sort());
    restarted.close();
    other.ws.close();
    expect(cluster.logs.filter((l) => l.event === "peer.refused").map((l) => [l.kind, l.id])).toEqual([
      ["trainer", "owner"],
      ["trainer", "owner"],
      ["trainer", "owner"],
    ]);
    expect((await fetch(`${cluster.coordinator.url}/health`)).status).toBe(200);
  },
  T,
);
