// One trainer cannot lock the others out of the cluster's policy version (issue 17 §1), attacked
// on a running coordinator: `policy 9007199254740991` (a safe integer, far ahead), one past the
// safe range, a jump of max_policy_step + 1 and the admin resume's equivalent are refused; the
// version stays where it was, persisted as it was across a restart, and another trainer's
// `resume 1` is answered `resumed 1`, not `conflict`. A step within the bound moves it.
import { afterEach, expect, test } from "bun:test";
import { CoordinatorToTrainer, TRAINER_PROTOCOL_VERSION } from "../protocol/trainer-stream.ts";
import { startCluster, TOKENS, waitFor, type Cluster } from "./support/coordinator/cluster.ts";

const T = 60_000;
let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** A raw trainer connection (as a hostile trainer writes frames), welcomed. */
async function rawTrainer(url: string, id: string): Promise<{ send(frame: unknown): void; frames: CoordinatorToTrainer[]; close(): void }> {
  const ws = new (WebSocket as any)(`${url.replace(/^http/, "ws")}/v1/trainer`, { headers: { authorization: `Bearer ${TOKENS.trainerToken}` } }) as WebSocket;
  const frames: CoordinatorToTrainer[] = [];
  ws.onmessage = (e) => void frames.push(CoordinatorToTrainer.parse(JSON.parse(String(e.data))));
  await new Promise<void>((resolve) => (ws.onopen = () => resolve()));
  ws.send(JSON.stringify({ type: "hello", protocol_version: TRAINER_PROTOCOL_VERSION, trainer_id: id }));
  await waitFor(() => frames.some((f) => f.type === "welcome"), `${id} welcomed`);
  return { send: (frame) => ws.send(typeof frame === "string" ? frame : JSON.stringify(frame)), frames, close: () => ws.close() };
}

const health = async (c: Cluster) => ((await (await fetch(`${c.coordinator.url}/health`)).json()) as { policy_version: number }).policy_version;

test(
  "policy versions are bounded: far-ahead and unsafe versions are refused, the others keep working, the version survives a restart",
  async () => {
    cluster = await startCluster({ maxPolicyStep: 1000 });
    const hostile = await rawTrainer(cluster.coordinator.url, "hostile");
    const errors = () => hostile.frames.filter((f): f is Extract<CoordinatorToTrainer, { type: "error" }> => f.type === "error");

    hostile.send({ type: "policy", version: 9007199254740991 });
    await waitFor(() => errors().length === 1, "the far-ahead version answered");
    expect(errors()[0]).toMatchObject({
      code: "bad_request",
      message: "policy version 9007199254740991 is more than max_policy_step (1000) ahead of the current 0",
    });
    // One past the safe range never reaches the coordinator's logic: the frame is refused as malformed.
    hostile.send('{"type":"policy","version":9007199254740992}');
    hostile.send({ type: "resume", version: 1001 });
    await waitFor(() => errors().length === 3, "the unsafe and too-far versions answered");
    expect(errors()[1]).toMatchObject({ code: "bad_request" });
    expect(errors()[2]).toMatchObject({ code: "bad_request", message: "policy version 1001 is more than max_policy_step (1000) ahead of the current 0" });
    const adminJump = await cluster.admin("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: 5000 }) });
    expect(adminJump.status).toBe(400);
    expect(await health(cluster)).toBe(0);

    // Another trainer is not locked out: its resume 1 moves the version.
    const other = await cluster.trainer("other");
    await other.resume(1);
    await waitFor(async () => (await health(cluster!)) === 1, "resumed at 1");
    hostile.send({ type: "policy", version: 1001 });
    await waitFor(async () => (await health(cluster!)) === 1001, "a step of exactly max_policy_step");
    hostile.close();

    await cluster.restart();
    expect(await health(cluster)).toBe(1001);
    const after = await cluster.trainer("later");
    await after.resume(1002);
    await waitFor(async () => (await health(cluster!)) === 1002, "resumed after the restart");
  },
  T,
);
