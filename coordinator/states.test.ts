// The coordinator's two state machines — rollouts and node connections — as tables and their
// movers: allowed moves only, the queue and the node's rollouts kept in step, an event per move.
import { describe, expect, test } from "bun:test";
import { EventBus } from "../lib/events.ts";
import type { CoordinatorEvents } from "./events.ts";
import { canMoveNode, NODE_STATES, NODE_TRANSITIONS, NodeBook, type NodeState } from "./node-states.ts";
import {
  canMove,
  ROLLOUT_STATES,
  ROLLOUT_TRANSITIONS,
  RolloutBook,
  TERMINAL_ROLLOUT_STATES,
  type LiveRollout,
  type LiveRolloutState,
} from "./rollout-states.ts";

const peer = { send() {}, close() {} };

function books(graceMs = 60_000, onGrace: (n: NodeState) => void = () => {}) {
  const events = new EventBus<CoordinatorEvents>();
  const seen: { name: string; payload: Record<string, unknown> }[] = [];
  events.onAny((name, payload) => void seen.push({ name, payload: payload as Record<string, unknown> }));
  const nodes = new NodeBook(events, graceMs, onGrace, Date.now);
  const rollouts = new RolloutBook(events, (id) => nodes.get(id), Date.now);
  return { events, seen, nodes, rollouts };
}

const rollout = (id: string): LiveRollout & { state: LiveRolloutState } => ({
  id,
  groupId: "g",
  idx: 0,
  image: "img",
  priority: 0,
  seq: 1,
  state: "QUEUED",
  nodeId: null,
  attempt: 0,
  policyVersionStarted: null,
  stage: null,
  since: Date.now(),
});

describe("rollout state table", () => {
  test("queued → assigned → a terminal state; back to the queue only from assigned; terminal states have no exits", () => {
    expect(canMove("QUEUED", "ASSIGNED")).toBe(true);
    expect(canMove("ASSIGNED", "QUEUED")).toBe(true);
    expect(canMove("QUEUED", "COMPLETED")).toBe(false);
    expect(canMove("QUEUED", "CANCELLED")).toBe(true);
    for (const t of TERMINAL_ROLLOUT_STATES) {
      expect(canMove("ASSIGNED", t)).toBe(true);
      expect(ROLLOUT_TRANSITIONS[t]).toEqual([]);
    }
    expect(ROLLOUT_STATES.filter((s) => canMove(s, "QUEUED"))).toEqual(["ASSIGNED"]);
  });

  test("the mover keeps the queue and the node's rollouts in step, counts attempts, announces each move, and refuses a move the table forbids", () => {
    const { nodes, rollouts, seen } = books();
    const node = nodes.add("n1", { to: "connected", peer, cause: "hello" });
    const r = rollout("r1");
    rollouts.add(r, "submitted");
    expect(rollouts.queue.has("r1")).toBe(true);
    rollouts.move(r, { to: "ASSIGNED", nodeId: "n1", policyVersion: 3 });
    expect([r.state, r.attempt, r.policyVersionStarted, rollouts.queue.has("r1"), node.assigned.has("r1")]).toEqual(["ASSIGNED", 1, 3, false, true]);
    rollouts.move(r, { to: "QUEUED", cause: "node n1 lost" });
    expect([r.state, r.nodeId, rollouts.queue.has("r1"), node.assigned.has("r1")]).toEqual(["QUEUED", null, true, false]);
    rollouts.move(r, { to: "ASSIGNED", nodeId: "n1", policyVersion: 3 });
    rollouts.move(r, { to: "COMPLETED", cause: null, timing: { run_ms: 5 } });
    expect([rollouts.get("r1"), rollouts.queue.has("r1"), node.assigned.size]).toEqual([undefined, false, 0]);
    expect(() => rollouts.move(r, { to: "QUEUED", cause: "again" })).toThrow(/no move COMPLETED → QUEUED/);
    const moves = seen.filter((e) => e.name === "rollout.state_changed").map((e) => [e.payload.from, e.payload.to, e.payload.node_id, e.payload.attempt]);
    expect(moves).toEqual([
      [null, "QUEUED", null, 0],
      ["QUEUED", "ASSIGNED", "n1", 1],
      ["ASSIGNED", "QUEUED", "n1", 1],
      ["QUEUED", "ASSIGNED", "n1", 2],
      ["ASSIGNED", "COMPLETED", "n1", 2],
    ]);
    expect(seen.find((e) => e.payload.to === "COMPLETED")!.payload.timing).toEqual({ run_ms: 5 });
  });
});

describe("node state table", () => {
  test("connected ⇄ disconnected, draining, lost only after disconnected, lost is final", () => {
    expect(canMoveNode("connected", "lost")).toBe(false);
    expect(canMoveNode("disconnected", "lost")).toBe(true);
    expect(canMoveNode("draining", "connected")).toBe(true);
    expect(NODE_TRANSITIONS.lost).toEqual([]);
    expect(NODE_STATES.filter((s) => canMoveNode(s, "lost"))).toEqual(["disconnected"]);
  });

  test("a disconnect starts the grace, a reconnect clears it, the grace's end is reported once; lost nodes leave the book", async () => {
    const expired: string[] = [];
    const { nodes, seen } = books(30, (n) => void expired.push(n.id));
    const a = nodes.add("a", { to: "connected", peer, cause: "hello" });
    nodes.move(a, { to: "disconnected", cause: "closed" });
    expect(a.peer).toBeNull();
    nodes.move(a, { to: "connected", peer, cause: "hello" });
    await Bun.sleep(80);
    expect(expired).toEqual([]);
    nodes.move(a, { to: "disconnected", cause: "closed" });
    await Bun.sleep(80);
    expect(expired).toEqual(["a"]);
    nodes.move(a, { to: "lost", cause: "grace over" });
    expect(nodes.get("a")).toBeUndefined();
    expect(() => nodes.move(a, { to: "connected", peer, cause: "hello" })).toThrow(/no move lost → connected/);
    expect(seen.filter((e) => e.name === "node.state_changed").map((e) => `${e.payload.from}→${e.payload.to}`)).toEqual([
      "null→connected",
      "connected→disconnected",
      "disconnected→connected",
      "connected→disconnected",
      "disconnected→lost",
    ]);
    nodes.stop();
  });

  test("after stop, a socket that closes late starts no grace (it would fire on a closed store)", async () => {
    const expired: string[] = [];
    const { nodes } = books(20, (n) => void expired.push(n.id));
    const a = nodes.add("a", { to: "connected", peer, cause: "hello" });
    nodes.stop();
    nodes.move(a, { to: "disconnected", cause: "closed while shutting down" });
    await Bun.sleep(80);
    expect(expired).toEqual([]);
  });
});
