// A node proves it is the same node across reconnects (issue 17 §1), attacked on a running
// coordinator (port 0, real WebSockets, its SQLite file): holding the node token, a forger says
// hello with a live node's id (with no secret, and with a wrong one), and — registered under an
// id of its own — sends a result for a rollout assigned to another node. Every attempt is refused
// or dropped, the real node stays connected on its first connection and its rollout's result is
// its own; secrets outlive a coordinator restart, are stored only as hashes, and a real
// `polar node` keeps its own beside its store (mode 0600).
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, statSync } from "node:fs";
import { startNode } from "../node/main.ts";
import { CoordinatorToNode, LINK_PROTOCOL_VERSION, type Assignment } from "../protocol/node-link.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, TOKENS, waitFor, type Cluster } from "./support/coordinator/cluster.ts";
import { defaultResult } from "./support/coordinator/simulated-node.ts";
import { startTarget, type RolloutTarget } from "./helpers/rollout-targets.ts";

const T = 60_000;
let cluster: Cluster | undefined;
let target: RolloutTarget | undefined;
afterEach(async () => {
  await cluster?.stop();
  await target?.stop();
  cluster = target = undefined;
});

/** A raw node connection: what it was sent, and how it was closed. */
async function forger(url: string, hello: Record<string, unknown>): Promise<{ ws: WebSocket; frames: CoordinatorToNode[]; closed: Promise<number> }> {
  const ws = new (WebSocket as any)(`${url.replace(/^http/, "ws")}/v1/node`, { headers: { authorization: `Bearer ${TOKENS.nodeToken}` } }) as WebSocket;
  const frames: CoordinatorToNode[] = [];
  const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
  ws.onmessage = (e) => void frames.push(CoordinatorToNode.parse(JSON.parse(String(e.data))));
  await new Promise<void>((resolve) => (ws.onopen = () => resolve()));
  ws.send(
    JSON.stringify({
      type: "hello",
      protocol_version: LINK_PROTOCOL_VERSION,
      version: "forged",
      capacity: { init: 1, run: 1, postrun: 1 },
      harnesses: ["mini"],
      images_warm: {},
      engines: [],
      held: [],
      ...hello,
    }),
  );
  return { ws, frames, closed };
}

const nodes = async (c: Cluster) =>
  ((await (await c.admin("/v1/admin/nodes")).json()) as { nodes: { node_id: string; status: string; assigned: number }[] }).nodes;

test(
  "a live node's id cannot be taken: no secret, a wrong secret or a second connection are refused; a forged result is dropped",
  async () => {
    cluster = await startCluster({ nodeGraceMs: 30_000 });
    const victim = await cluster.node("victim", { runMs: () => null });
    const results: StreamedResult[] = [];
    const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
    const { rollout_ids } = await trainer.submit({ task: TASK, n: 1, agent: AGENT });
    await waitFor(() => victim.running.size === 1, "the victim holds the rollout");
    const assignment = victim.received[0] as Assignment;

    // Hello with the victim's id: without its secret, with a wrong one — and the victim's own secret from a second connection.
    const refusals: { code: number; error: string | undefined }[] = [];
    for (const secret of [undefined, "x".repeat(43)]) {
      const f = await forger(cluster.coordinator.url, { node_id: "victim", ...(secret && { node_secret: secret }) });
      refusals.push({ code: await f.closed, error: f.frames.find((m) => m.type === "error")?.code });
      expect(f.frames.some((m) => m.type === "welcome" || m.type === "assign")).toBe(false);
    }
    expect(refusals).toEqual([
      { code: 4003, error: "unauthorized" },
      { code: 4003, error: "unauthorized" },
    ]);

    // Registered under an id of its own, the forger reports a result for the victim's rollout.
    const own = await forger(cluster.coordinator.url, { node_id: "forger" });
    await waitFor(() => own.frames.some((m) => m.type === "welcome"), "the forger's own registration");
    const welcome = own.frames.find((m) => m.type === "welcome") as Extract<CoordinatorToNode, { type: "welcome" }>;
    expect(welcome.node_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    own.ws.send(JSON.stringify({ type: "result", rollout_id: assignment.rollout_id, attempt: assignment.attempt, result: defaultResult(assignment, 42) }));
    await waitFor(() => own.frames.some((m) => m.type === "result_ack"), "the forged result answered (acknowledged, not stored)");
    // A second connection of the forger's own id, with its own secret, while the first is live.
    const twice = await forger(cluster.coordinator.url, { node_id: "forger", node_secret: welcome.node_secret });
    expect(await twice.closed).toBe(4009);
    expect(twice.frames.find((m) => m.type === "error")).toMatchObject({ code: "conflict" });

    // The victim was never displaced: still connected, still holding its rollout, which ends with its own result.
    expect((await nodes(cluster)).find((n) => n.node_id === "victim")).toMatchObject({ status: "connected", assigned: 1 });
    expect(victim.finishHeld()).toBe(1);
    await waitFor(() => results.length === 1, "the victim's result streamed");
    expect(results[0]).toMatchObject({ rollout_id: rollout_ids[0], status: "COMPLETED", reward: 1 });
    const refused = cluster.logs.filter((l) => l.event === "peer.refused").map((l) => ({ kind: l.kind, id: l.id }));
    expect(refused).toEqual([
      { kind: "node", id: "victim" },
      { kind: "node", id: "victim" },
      { kind: "node", id: "forger" },
    ]);
    own.ws.close();
    expect((await fetch(`${cluster.coordinator.url}/health`)).status).toBe(200);
  },
  T,
);

test(
  "secrets outlive a coordinator restart and are stored only hashed; the node's own restart proves it; an operator can forget an identity",
  async () => {
    cluster = await startCluster({ nodeGraceMs: 30_000 });
    const secrets = new Map<string, string>();
    const node = await cluster.node("keeper", { secrets });
    const secret = secrets.get("keeper")!;
    expect(secret).toBeTruthy();
    await cluster.restart();
    // The forger without the secret is refused by the restarted coordinator; the node, with it, reconnects.
    const f = await forger(cluster.coordinator.url, { node_id: "keeper" });
    expect(await f.closed).toBe(4003);
    node.disconnect();
    await node.connect();
    expect((await nodes(cluster)).find((n) => n.node_id === "keeper")?.status).toBe("connected");
    const stored = new Database(cluster.db, { readonly: true }).query("select key, value from meta where key like '%_secret:%'").all() as {
      key: string;
      value: string;
    }[];
    expect(stored.map((r) => r.key).sort()).toEqual(["node_secret:keeper"]);
    expect(stored[0]!.value).toMatch(/^[0-9a-f]{64}$/);
    for (const file of [cluster.db, `${cluster.db}-wal`]) expect(existsSync(file) && readFileSync(file).includes(Buffer.from(secret))).toBe(false);

    // Forgotten by the operator, the id registers afresh at its next hello (a node whose store was lost).
    node.kill();
    await waitFor(async () => (await nodes(cluster!)).find((n) => n.node_id === "keeper")?.status !== "connected", "the node gone");
    expect((await cluster.admin("/v1/admin/nodes/keeper/identity", { method: "DELETE" })).status).toBe(200);
    expect((await cluster.admin("/v1/admin/nodes/keeper/identity", { method: "DELETE" })).status).toBe(404);
    const fresh = await forger(cluster.coordinator.url, { node_id: "keeper" });
    await waitFor(() => fresh.frames.some((m) => m.type === "welcome"), "registered afresh");
    fresh.ws.close();
  },
  T,
);

test(
  "a real polar node keeps the secret beside its store (mode 0600), is not displaced by a forger, and is welcomed back with it after its own restart",
  async () => {
    target = await startTarget("coordinator");
    const file = `${target.node.config.db}.identity.json`;
    await waitFor(() => {
      try {
        return statSync(file).size > 0;
      } catch {
        return false;
      }
    }, "the identity file");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const kept = JSON.parse(readFileSync(file, "utf8")) as Record<string, { node_id: string; node_secret: string }>;
    expect(kept[target.coordinator!.url]).toEqual({ node_id: target.node.config.node_id, node_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    // Anyone else saying hello with this node's id is refused while it is connected.
    const f = await forger(target.coordinator!.url, { node_id: target.node.config.node_id });
    expect(await f.closed).toBe(4003);
    expect(target.node.link?.connected).toBe(true);

    // Restarted on its store, the node proves its id with the kept secret and is welcomed back.
    const config = target.node.config;
    await target.node.stop();
    target.node = await startNode(config);
    await waitFor(() => target!.node.link?.connected === true, "the restarted node welcomed");
    const listed = (await (await fetch(`${target.coordinator!.url}/v1/admin/nodes`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } })).json()) as {
      nodes: { node_id: string; status: string }[];
    };
    expect(listed.nodes).toEqual([expect.objectContaining({ node_id: config.node_id, status: "connected" })]);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(kept);
  },
  T,
);
