import { describe, expect, test } from "bun:test";
import { checkTraceBlob, decodeTraceFrame, encodeTraceFrame, isTraceFrame, packTraces, traceTokenCounts, unpackTraces } from "./trace-frame.ts";

const traces = [
  {
    prompt_ids: [1, 2, -5, 2 ** 31 - 1, -(2 ** 31)],
    response_ids: [7, 8, 9],
    loss_mask: [1, 0, 1],
    // null: not returned by the engine; it must come back null, never 0.
    response_logprobs: [-0.123456789012345, null, -1e-300],
    finish_reason: "stop",
    reward: 1,
    metadata: { policy_versions: [3] },
  },
  // A text-only trace (no logprobs array at all) and an empty one.
  { prompt_ids: [4], response_ids: [5], loss_mask: [0], finish_reason: null, reward: 0 },
  { prompt_ids: [], response_ids: [], loss_mask: [], response_logprobs: [], reward: null },
];

function packed() {
  const p = packTraces(traces);
  if (!p) throw new Error("expected the traces to pack");
  return p;
}

describe("trace blob", () => {
  test("round-trips ids, masks and logprobs exactly, absent ones staying absent", () => {
    const { rest, blob } = packed();
    expect(rest[0]).toEqual({ finish_reason: "stop", reward: 1, metadata: { policy_versions: [3] } });
    const back = unpackTraces(rest, blob);
    expect(back).toEqual(traces);
    expect((back[0]!.response_logprobs as unknown[])[1]).toBeNull();
    expect("response_logprobs" in back[1]!).toBe(false);
  });

  test("counts tokens from the length table and the mask without decoding ids", () => {
    const { blob } = packed();
    expect(traceTokenCounts(blob)).toEqual([
      { prompt: 5, response: 3, trainable: 2 },
      { prompt: 1, response: 1, trainable: 0 },
      { prompt: 0, response: 0, trainable: 0 },
    ]);
  });

  test("decodes a blob at any byte offset (copied when unaligned)", () => {
    const { rest, blob } = packed();
    const shifted = new Uint8Array(blob.byteLength + 3);
    shifted.set(blob, 3);
    expect(unpackTraces(rest, shifted.subarray(3))).toEqual(traces);
  });

  test("refuses what it cannot carry exactly: the caller keeps JSON", () => {
    expect(packTraces([{ prompt_ids: [2 ** 31] }])).toBeNull();
    expect(packTraces([{ prompt_ids: [1.5] }])).toBeNull();
    expect(packTraces([{ loss_mask: [2] }])).toBeNull();
    expect(packTraces([{ response_logprobs: ["x"] }])).toBeNull();
    expect(packTraces([{ response_ids: "1,2" }])).toBeNull();
  });

  test("refuses malformed blobs: truncated, padded, wrong trace count, lengths out of bounds, bad mask", () => {
    const { rest, blob } = packed();
    expect(() => checkTraceBlob(blob.subarray(0, blob.byteLength - 1))).toThrow(/bytes where its lengths say/);
    const longer = new Uint8Array(blob.byteLength + 1);
    longer.set(blob);
    expect(() => checkTraceBlob(longer)).toThrow(/bytes where its lengths say/);
    expect(() => unpackTraces(rest.slice(1), blob)).toThrow(/3 traces in the blob, 2 in the header/);
    expect(() => checkTraceBlob(new Uint8Array(4))).toThrow(/shorter than its header/);

    const huge = blob.slice();
    new DataView(huge.buffer).setInt32(8, 2 ** 30, true); // trace 0 prompt_ids
    expect(() => checkTraceBlob(huge)).toThrow(/length/);
    const negative = blob.slice();
    new DataView(negative.buffer).setInt32(8, -7, true);
    expect(() => checkTraceBlob(negative)).toThrow(/length -7/);
    const manyTraces = blob.slice();
    new DataView(manyTraces.buffer).setUint32(0, 0xffffffff, true);
    expect(() => checkTraceBlob(manyTraces)).toThrow(/traces \(at most/);
    const badMask = blob.slice();
    badMask[badMask.byteLength - 1] = 7;
    expect(() => unpackTraces(rest, badMask)).toThrow(/loss_mask/);
  });
});

describe("trace frame", () => {
  test("carries a JSON header and the blob as it is", () => {
    const { rest, blob } = packed();
    const frame = encodeTraceFrame({ type: "result", result: { traces: rest } }, blob);
    expect(isTraceFrame(frame)).toBe(true);
    expect(isTraceFrame(new TextEncoder().encode('{"type":"result"}'))).toBe(false);
    const { header, blob: got } = decodeTraceFrame(frame);
    expect(header).toEqual({ type: "result", result: { traces: rest } });
    expect(got).toEqual(blob);
    expect(got.byteOffset % 8).toBe(0);
  });

  test("refuses a header longer than the frame or than the limit, and a header that is not JSON", () => {
    const frame = encodeTraceFrame({ a: 1 }, packed().blob);
    const lying = frame.slice();
    new DataView(lying.buffer).setUint32(4, frame.byteLength, true);
    expect(() => decodeTraceFrame(lying)).toThrow(/shorter than its header/);
    expect(() => decodeTraceFrame(frame, 3)).toThrow(/at most 3/);
    const garbled = frame.slice();
    garbled[8] = 0xff;
    expect(() => decodeTraceFrame(garbled)).toThrow(/not UTF-8 JSON/);
    expect(() => decodeTraceFrame(new Uint8Array(3))).toThrow(/not a trace frame/);
  });
});
