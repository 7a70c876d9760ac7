// The coordinator's two forms of a stored result read the same: a row from before trace blobs
// (the whole session as JSON, no blob) and a packed one give the same JSON frame, the same binary
// frame, and the same whole session; a result the blob cannot carry exactly is sent as JSON.
import { describe, expect, test } from "bun:test";
import { ReportedResult, ReportedResultHeader } from "../protocol/node-link.ts";
import { decodeTraceFrame, packTraces, unpackTraces } from "../protocol/trace-frame.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { factsOfPacked, isUsablePacked, outgoingFromRow, packedFromFrame, resultFrame, wholeResult, wholeSession } from "./packed-results.ts";
import type { ResultWithTraces } from "./store/repo.ts";

const session = ReportedResult.parse({
  session_id: "r1",
  task_id: "t",
  status: "COMPLETED",
  trajectory: {
    status: "COMPLETED",
    traces: [
      {
        prompt_ids: [1, 2],
        response_ids: [3, 4],
        loss_mask: [0, 1],
        response_logprobs: [0, -0.25],
        finish_reason: "stop",
        reward: 1,
        metadata: { policy_versions: [2] },
      },
    ],
  },
  timing: { e2e_ms: 5 },
  node_id: "n",
  error: null,
  metadata: {},
});

/** As a node's trace frame delivers it: the traces' other fields in the header, their arrays in the blob. */
function framed(s: ReportedResult) {
  const { rest, blob } = packTraces(s.trajectory.traces)!;
  return packedFromFrame(ReportedResultHeader.parse({ ...s, trajectory: { ...s.trajectory, traces: rest } }), blob);
}

function row(s: ReportedResultHeader, traces: Uint8Array | null): ResultWithTraces {
  return {
    rolloutId: "r1",
    groupId: "g",
    trainerId: "tr",
    status: "COMPLETED",
    reward: 1,
    session: s,
    traces: traces && Buffer.from(traces),
    policyVersionStarted: 2,
    stale: false,
    createdAt: 1,
    ackedAt: null,
  };
}

type Decoded = Omit<StreamedResult, "traces"> & { traces: Record<string, unknown>[] };

function fromFrame(frame: string | Uint8Array): Decoded {
  if (typeof frame === "string") return (JSON.parse(frame) as { result: Decoded }).result;
  const { header, blob } = decodeTraceFrame(frame);
  const result = (header as { result: Decoded }).result;
  return { ...result, traces: unpackTraces(result.traces, blob) };
}

describe("packed results", () => {
  const packed = framed(session);
  const oldRow = row(session, null);
  const newRow = row(packed.session, packed.traces);

  test("a row from before trace blobs and a packed row stream and read identically", () => {
    expect(packed.traces).not.toBeNull();
    expect(packed.session.trajectory.traces[0]).toEqual({ finish_reason: "stop", reward: 1, metadata: { policy_versions: [2] } });
    const frames = [oldRow, newRow].flatMap((r) => [resultFrame(outgoingFromRow(r), "json"), resultFrame(outgoingFromRow(r), "binary")]);
    expect(frames.map((f) => typeof f)).toEqual(["string", "object", "string", "object"]);
    const decoded = frames.map(fromFrame);
    for (const d of decoded) expect(d).toEqual(decoded[0]!);
    expect(decoded[0]!.traces).toEqual(session.trajectory.traces);
    expect(wholeSession(newRow)).toEqual(wholeSession(oldRow));
    expect(wholeSession(oldRow)).toEqual(session);
  });

  test("usability and token facts come from the blob as they came from the arrays", () => {
    const whole = wholeResult(session);
    expect(isUsablePacked(packed)).toBe(true);
    expect(isUsablePacked(whole)).toBe(true);
    expect(factsOfPacked(packed)).toEqual(factsOfPacked(whole));
    expect(factsOfPacked(packed).tokens).toEqual({ prompt: 2, response: 2, trainable: 1 });
    const untrainable = framed({
      ...session,
      trajectory: { ...session.trajectory, traces: [{ ...session.trajectory.traces[0]!, loss_mask: [0, 0], response_logprobs: [0, 0] }] },
    });
    expect(isUsablePacked(untrainable)).toBe(false);
  });

  test("a stored result whose arrays a blob cannot carry exactly goes to a binary trainer as JSON", () => {
    // A row as an older coordinator could have stored it: ids no RolloutTrace allows.
    const odd = {
      ...session,
      trajectory: { ...session.trajectory, traces: [{ prompt_ids: [1.5], response_ids: [2 ** 40], finish_reason: "stop", reward: 1, metadata: {} }] },
    } as unknown as ReportedResult;
    expect(packTraces(odd.trajectory.traces)).toBeNull();
    const frame = resultFrame(outgoingFromRow(row(odd, null)), "binary");
    expect(typeof frame).toBe("string");
    expect(fromFrame(frame).traces).toEqual(odd.trajectory.traces);
  });
});
