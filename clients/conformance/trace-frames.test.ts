// The shared trace-frame fixture is what the encoder produces today, and the TypeScript client
// codec decodes each frame to its JSON object, the typed client accepts the well-formed ones and
// refuses each malformed one (the Python client runs
// the same fixture in clients/python/tests/test_trace_frame.py).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { decodeTraceFrame, unpackTraces } from "../../protocol/trace-frame.ts";
import { parseCoordinatorFrame } from "../typescript/trainer-client.ts";
import { TRACE_FRAMES_PATH, traceFramesFixture } from "./trace-frame-fixture.ts";

const fixture = JSON.parse(readFileSync(TRACE_FRAMES_PATH, "utf8")) as ReturnType<typeof traceFramesFixture>;
const bytes = (hex: string) => new Uint8Array(Buffer.from(hex, "hex"));

describe("trace-frame fixture", () => {
  test("is current (bun clients/conformance/trace-frame-fixture.ts rewrites it)", () => {
    expect(fixture).toEqual(traceFramesFixture());
  });

  test.each(fixture.frames.map((f) => [f.name, f] as const))("the codec decodes %s; the TypeScript client takes it if typed", (_name, frame) => {
    const { header, blob } = decodeTraceFrame(bytes(frame.hex));
    const result = (header as { result: { traces: Record<string, unknown>[] } }).result;
    expect({ ...(header as object), result: { ...result, traces: unpackTraces(result.traces, blob) } }).toEqual(frame.decoded);
    if (!frame.typed) {
      expect(() => parseCoordinatorFrame(bytes(frame.hex))).toThrow();
      return;
    }
    const decoded = parseCoordinatorFrame(bytes(frame.hex));
    expect(decoded).toEqual(frame.decoded as never);
    // The same message as a JSON text frame reads the same.
    expect(parseCoordinatorFrame(JSON.stringify(frame.decoded))).toEqual(decoded);
  });

  test.each(fixture.malformed.map((f) => [f.name, f] as const))("the TypeScript client refuses %s", (_name, frame) => {
    expect(() => parseCoordinatorFrame(bytes(frame.hex))).toThrow();
  });
});
