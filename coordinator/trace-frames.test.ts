// Binary trace frames end to end over real WebSockets: nodes report results as trace frames (or
// JSON), the coordinator stores the blob and streams it to a trainer that asked for binary and as
// JSON to one that did not — from memory and, after a restart, from the SQLite file — and both
// decode to the same traces, exactly. Malformed frames are refused.
import { afterEach, describe, expect, test } from "bun:test";
import type { Assignment, ReportedResult } from "../protocol/node-link.ts";
import type { RolloutTrace } from "../protocol/rollout.ts";
import { decodeTraceFrame, encodeTraceFrame, isTraceFrame, nodeResultFrame, packTraces } from "../protocol/trace-frame.ts";
import { CoordinatorToTrainer, TRAINER_PROTOCOL_VERSION, type StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, TOKENS, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";
import { defaultResult } from "../test/support/coordinator/simulated-node.ts";

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

const T = 60_000;

/** Traces unlike any other rollout's: ids from the rollout's index, int32's extremes, a logprob near 0. */
function tracesOf(a: Assignment): RolloutTrace[] {
  const k = Number(a.rollout_id.length) + a.rollout_id.charCodeAt(a.rollout_id.length - 1);
  return [
    {
      prompt_ids: [k, 2 ** 31 - 1, -(2 ** 31), 7],
      response_ids: [k + 1, k + 2, k + 3],
      loss_mask: [1, 0, 1],
      response_logprobs: [-0.1 * k, 0, -1e-9],
      finish_reason: "stop",
      reward: 1,
      metadata: { policy_versions: [0] },
    },
    { prompt_ids: [k], response_ids: [k], loss_mask: [0], response_logprobs: [0], finish_reason: "length", reward: 1, metadata: { policy_versions: [0] } },
  ];
}

function resultOf(a: Assignment): ReportedResult {
  const base = defaultResult(a);
  base.trajectory.traces = tracesOf(a);
  return base;
}

const byId = (results: StreamedResult[]) => new Map(results.map((r) => [r.rollout_id, r]));

describe("binary trace frames", () => {
  test(
    "trace-frame and JSON nodes; a binary and a JSON trainer get identical traces, from memory and from the store",
    async () => {
      cluster = await startCluster();
      const assignments: Assignment[] = [];
      const record = (a: Assignment) => (assignments.push(a), resultOf(a));
      const first = [
        await cluster.node("framed", { traceFrames: true, makeResult: record, capacity: { init: 4, run: 4, postrun: 4 } }),
        await cluster.node("json", { makeResult: record, capacity: { init: 4, run: 4, postrun: 4 } }),
      ];
      const binary: StreamedResult[] = [];
      const json: StreamedResult[] = [];
      const b = await cluster.trainer("binary", { onResult: (r) => void binary.push(r) });
      const j = await cluster.trainer("json", { encoding: "json", onResult: (r) => void json.push(r) });
      await b.submit({ task: TASK, n: 6, agent: AGENT });
      await j.submit({ task: TASK, n: 6, agent: AGENT });
      await waitFor(() => binary.length === 6 && json.length === 6, "12 results");
      const expected = new Map(assignments.map((a) => [a.rollout_id, tracesOf(a)]));
      for (const r of [...binary, ...json]) expect(r.traces).toEqual(expected.get(r.rollout_id)!);
      expect(binary[0]!.traces[0]!.response_logprobs[2]).toBe(-1e-9);

      // The stored session is whole for the operator's drill-down (the blob's arrays put back).
      const detail = (await (await cluster.admin(`/v1/admin/rollouts/${binary[0]!.rollout_id}?group=${binary[0]!.group_id}`)).json()) as {
        result: ReportedResult;
      };
      expect(detail.result.trajectory.traces).toEqual(expected.get(binary[0]!.rollout_id)!);

      // Results finished while no trainer listens, then a restart: streamed from the SQLite file.
      for (const node of first) node.kill();
      const framed = await cluster.node("framed-2", { traceFrames: true, runMs: () => null, makeResult: record, capacity: { init: 8, run: 8, postrun: 8 } });
      const later = await b.submit({ task: TASK, n: 3, agent: AGENT });
      const laterJson = await j.submit({ task: TASK, n: 3, agent: AGENT });
      await waitFor(() => framed.received.length === 6, "the later rollouts assigned");
      b.close();
      j.close();
      framed.finishHeld();
      await waitFor(
        async () =>
          ((await (await cluster!.admin("/v1/admin/stats")).json()) as { rollouts_by_state: Record<string, number> }).rollouts_by_state.COMPLETED === 18,
        "18 stored",
      );
      await cluster.restart();
      const binaryAgain: StreamedResult[] = [];
      const jsonAgain: StreamedResult[] = [];
      await cluster.trainer("binary", { onResult: (r) => void binaryAgain.push(r) });
      await cluster.trainer("json", { encoding: "json", onResult: (r) => void jsonAgain.push(r) });
      await waitFor(
        () => later.rollout_ids.every((id) => byId(binaryAgain).has(id)) && laterJson.rollout_ids.every((id) => byId(jsonAgain).has(id)),
        "the later results after the restart",
      );
      const expectedNow = new Map(assignments.map((a) => [a.rollout_id, tracesOf(a)]));
      for (const r of [...binaryAgain, ...jsonAgain]) expect(r.traces).toEqual(expectedNow.get(r.rollout_id)!);
    },
    T,
  );

  test(
    "the hello negotiates: binary frames only for a trainer that asked, JSON text otherwise",
    async () => {
      cluster = await startCluster();
      await cluster.node("framed", { traceFrames: true, makeResult: resultOf });
      const url = `${cluster.coordinator.url.replace(/^http/, "ws")}/v1/trainer`;
      async function rawTrainer(id: string, encoding?: "binary" | "json") {
        const ws = new (WebSocket as any)(url, { headers: { authorization: `Bearer ${TOKENS.trainerToken}` } }) as WebSocket;
        ws.binaryType = "arraybuffer";
        const frames: (string | Uint8Array)[] = [];
        ws.onmessage = (e) => void frames.push(typeof e.data === "string" ? e.data : new Uint8Array(e.data as ArrayBuffer));
        await new Promise((resolve) => (ws.onopen = resolve));
        ws.send(JSON.stringify({ type: "hello", protocol_version: TRAINER_PROTOCOL_VERSION, trainer_id: id, ...(encoding && { encoding }) }));
        await waitFor(() => frames.length === 1, "welcome");
        ws.send(JSON.stringify({ type: "credit", n: 10 }));
        ws.send(JSON.stringify({ type: "submit", request_id: "s", group: { task: TASK, n: 2, agent: AGENT } }));
        return { ws, frames };
      }
      const binary = await rawTrainer("raw-binary", "binary");
      const old = await rawTrainer("raw-old");
      await waitFor(
        () =>
          binary.frames.filter((f) => typeof f !== "string").length === 2 &&
          old.frames.filter((f) => typeof f === "string" && f.includes('"result"')).length === 2,
        "two results each",
      );
      expect(CoordinatorToTrainer.parse(JSON.parse(binary.frames[0] as string))).toMatchObject({ type: "welcome", encoding: "binary" });
      expect(CoordinatorToTrainer.parse(JSON.parse(old.frames[0] as string))).toMatchObject({ type: "welcome", encoding: "json" });
      for (const f of binary.frames.filter((f): f is Uint8Array => typeof f !== "string")) {
        expect(isTraceFrame(f)).toBe(true);
        const { header } = decodeTraceFrame(f);
        expect((header as { result: StreamedResult }).result.traces[0]).not.toHaveProperty("prompt_ids");
      }
      binary.ws.close();
      old.ws.close();
    },
    T,
  );

  test(
    "a malformed trace frame from a node is refused with an error frame and nothing is stored",
    async () => {
      cluster = await startCluster({ maxBadFrames: 100 });
      const node = await cluster.node("n", { runMs: () => null });
      const t = await cluster.trainer("tr");
      await t.submit({ task: TASK, n: 1, agent: AGENT });
      await waitFor(() => node.received.length === 1, "assigned");
      const a = node.received[0]!;
      const errors = () => node.errors.map((e) => e.message);
      const good = nodeResultFrame(a.rollout_id, a.attempt, resultOf(a))!;
      const truncated = good.subarray(0, good.byteLength - 1);
      const { header, blob } = decodeTraceFrame(good);
      const oneTraceTooMany = encodeTraceFrame(header, packTraces([...tracesOf(a), ...tracesOf(a)])!.blob);
      const arraysInHeader = encodeTraceFrame({ ...(header as object), result: resultOf(a) }, blob);
      const notAResult = encodeTraceFrame({ type: "progress", rollout_id: a.rollout_id, attempt: 1, state: "RUN" }, blob);
      const badHeader = good.slice();
      new DataView(badHeader.buffer).setUint32(4, 1 << 30, true);
      for (const frame of [truncated, oneTraceTooMany, arraysInHeader, notAResult, badHeader]) node.sendBinary(frame);
      await waitFor(() => errors().length === 5, "five error frames");
      expect(node.errors.every((e) => e.code === "bad_request")).toBe(true);
      expect(errors()[0]).toMatch(/malformed trace blob/);
      expect(errors()[1]).toMatch(/4 traces in the blob, 2 in the header/);
      expect(errors()[2]).toMatch(/Unrecognized keys: "prompt_ids"/);
      expect(errors()[3]).toMatch(/type: Invalid input: expected "result"/);
      expect(errors()[4]).toMatch(/header/);
      const stats = (await (await cluster.admin("/v1/admin/stats")).json()) as { rollouts_by_state: Record<string, number> };
      expect(stats.rollouts_by_state.COMPLETED ?? 0).toBe(0);
      // The node's good frame is still accepted after all that.
      node.sendBinary(good);
      await waitFor(
        async () =>
          ((await (await cluster!.admin("/v1/admin/stats")).json()) as { rollouts_by_state: Record<string, number> }).rollouts_by_state.COMPLETED === 1,
        "the good one stored",
      );
    },
    T,
  );
});
