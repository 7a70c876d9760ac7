# Binary trace frames, against the fixture the TypeScript client is tested with
# (clients/conformance/trace-frames.json, written by the TypeScript encoder): each frame decodes to
# its JSON object (ids, masks and float64 logprobs exact, a null logprob None, an absent array
# absent), parses to the same typed rollout as the JSON text frame would, and every malformed
# frame is refused as a protocol error.
import json
import unittest
from pathlib import Path

from polar_client import PolarClientError, wire
from polar_client.trace_frame import result_frame_object

FIXTURE = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "trace-frames.json").read_text())
FRAMES = {f["name"]: f for f in FIXTURE["frames"]}


class TraceFrameTest(unittest.TestCase):
    def test_each_frame_decodes_to_its_json_object(self):
        for frame in FIXTURE["frames"]:
            with self.subTest(frame["name"]):
                self.assertEqual(result_frame_object(bytes.fromhex(frame["hex"])), frame["decoded"])

    def test_a_null_logprob_stays_none_and_an_absent_array_stays_absent(self):
        traces = result_frame_object(bytes.fromhex(FRAMES["raw_traces"]["hex"]))["result"]["traces"]
        self.assertIsNone(traces[0]["response_logprobs"][1])
        self.assertEqual(traces[0]["response_logprobs"][2], -5e-324)
        self.assertNotIn("response_logprobs", traces[1])

    def test_binary_and_json_frames_parse_to_the_same_rollout(self):
        frame = FRAMES["well_formed_traces"]
        from_binary = wire.parse_frame(bytes.fromhex(frame["hex"]))
        from_json = wire.parse_frame(json.dumps(frame["decoded"]))
        self.assertIsInstance(from_binary, wire.ResultFrame)
        self.assertEqual(from_binary, from_json)
        self.assertEqual(from_binary.rollout.traces[0].response_logprobs, [-0.75, 0.0])

    def test_malformed_frames_are_protocol_errors(self):
        for frame in FIXTURE["malformed"]:
            with self.subTest(frame["name"]):
                with self.assertRaises(PolarClientError) as caught:
                    wire.parse_frame(bytes.fromhex(frame["hex"]))
                self.assertEqual(caught.exception.code, "protocol")

    def test_the_hello_asks_for_binary_unless_told_json(self):
        self.assertEqual(json.loads(wire.hello("t"))["encoding"], "binary")
        self.assertEqual(json.loads(wire.hello("t", encoding="json"))["encoding"], "json")
        with self.assertRaises(ValueError):
            wire.hello("t", encoding="msgpack")


if __name__ == "__main__":
    unittest.main()
