# The wire layer: frames from the coordinator parsed field by field into typed rollouts and traces
# (masked, failure kind, per-call policy versions read from where the node puts them), anything
# malformed refused, and frames to the coordinator built with the schema's names.
import json
import unittest

from polar_client import InlineTask, PolarClientError, Sampling, wire
from fixtures import group_frame, result, result_frame, trace


class ParseTest(unittest.TestCase):
    def test_a_completed_rollout_with_its_traces(self):
        frame = wire.parse_frame(result_frame("ro_1", traces=[trace(calls=(0,), versions=(3,)), trace(calls=(1,), versions=(4,), finish="tool_calls")], started=3, versions=(3, 4)))
        self.assertIsInstance(frame, wire.ResultFrame)
        r = frame.rollout
        self.assertEqual((r.result_id, r.group_id, r.status, r.reward), ("ro_1", "grp_1", "COMPLETED", 1.0))
        self.assertFalse(r.masked)
        self.assertIsNone(r.failure_kind)
        self.assertEqual(r.num_traces, 2)
        self.assertEqual((r.policy_version_started, r.policy_versions), (3, [3, 4]))
        self.assertEqual(r.timing["e2e_ms"], 1234.5)
        t = r.traces[1]
        self.assertEqual((t.prompt_ids, t.response_ids, t.loss_mask), ([1, 2, 3], [10, 11, 12, 13], [1, 1, 0, 1]))
        self.assertEqual(t.response_logprobs, [-0.5, -0.25, 0.0, -1.0])
        self.assertEqual((t.calls, t.policy_versions, t.finish_reason, t.trainable_tokens), ([1], [4], "tool_calls", 3))

    def test_a_node_failure_is_masked_and_names_its_cause(self):
        metadata = {"reward": 0, "failure": {"cause": "sandbox_start", "message": "no image"}}
        r = wire.parse_frame(result_frame("ro_2", status="ERROR", reward=0.0, traces=[trace(mask=(0, 0, 0, 0), logprobs=(0, 0, 0, 0), masked=True)], metadata=metadata, error="sandbox_start: no image")).rollout
        self.assertTrue(r.masked)
        self.assertTrue(r.traces[0].masked)
        self.assertEqual(r.failure_kind, "sandbox_start")
        self.assertEqual(r.error, "sandbox_start: no image")

    def test_cancelled_and_coordinator_made_results(self):
        cancelled = wire.parse_frame(result_frame("ro_3", status="CANCELLED", reward=None, traces=[], metadata={}, error="cancelled: by the trainer")).rollout
        self.assertEqual((cancelled.masked, cancelled.failure_kind, cancelled.reward), (True, "cancelled", None))
        lost = wire.parse_frame(result_frame("ro_4", status="ERROR", reward=None, traces=[], metadata={}, error="node lost; no attempts left (3)")).rollout
        self.assertEqual((lost.masked, lost.failure_kind), (True, "unreported"))

    def test_a_completed_rollout_without_any_trace_is_not_usable(self):
        r = wire.parse_frame(result_frame("ro_5", traces=[])).rollout
        self.assertTrue(r.masked)
        self.assertIsNone(r.failure_kind)

    def test_group_welcome_paused_resumed_error_submitted(self):
        g = wire.parse_frame(group_frame("grp_1", ["a", "b"], [1.0, None], [0.5, None], status="cancelled"))
        self.assertEqual((g.group_id, g.status, g.rollout_ids, g.rewards, g.advantages), ("grp_1", "cancelled", ["a", "b"], [1.0, None], [0.5, None]))
        self.assertEqual(wire.parse_frame('{"type":"paused","request_id":"r","nodes":2}'), wire.PausedFrame("r", 2))
        self.assertEqual(wire.parse_frame('{"type":"resumed","policy_version":3}'), wire.ResumedFrame(3))
        self.assertEqual(wire.parse_frame('{"type":"error","code":"not_found","message":"m"}'), wire.ErrorFrame("not_found", "m", None))
        self.assertEqual(wire.parse_frame('{"type":"submitted","request_id":"r","group_id":"g","rollout_ids":["a"]}'), wire.SubmittedFrame("r", "g", ["a"]))

    def test_malformed_frames_are_refused(self):
        bad = [
            b"\x00binary",
            "not json",
            "[]",
            '{"type":"nope"}',
            '{"type":"paused","request_id":"r","nodes":true}',
            '{"type":"resumed","policy_version":1.5}',
            group_frame("g", ["a", "b"], [1.0]),
            json.dumps({"type": "result", "result": result("x", status="DONE")}),
            json.dumps({"type": "result", "result": result("x", traces=[trace(mask=(1, 1))])}),
            json.dumps({"type": "result", "result": result("x", traces=[trace(mask=(1, 2, 0, 1))])}),
            json.dumps({"type": "result", "result": {**result("x"), "reward": "1"}}),
            json.dumps({"type": "result", "result": {k: v for k, v in result("x").items() if k != "stale"}}),
            '{"type":"result","result":' + json.dumps(result("x"))[:-1] + ',"reward":NaN}}',
        ]
        for raw in bad:
            with self.assertRaises(PolarClientError, msg=repr(raw)[:60]) as caught:
                wire.parse_frame(raw)
            self.assertEqual(caught.exception.code, "protocol")


class EncodeTest(unittest.TestCase):
    def test_submit_by_id_and_inline_with_sampling(self):
        by_id = json.loads(wire.submit("r1", task="py-lru-get-refresh", n=4, harness="mini", priority=5, early_stop_min_usable=2, advantages="mean_std"))
        self.assertEqual(by_id["type"], "submit")
        self.assertEqual(by_id["group"]["task"], "py-lru-get-refresh")
        self.assertEqual((by_id["group"]["n"], by_id["group"]["priority"], by_id["group"]["early_stop_min_usable"], by_id["group"]["advantages"]), (4, 5, 2, "mean_std"))
        inline = json.loads(wire.submit("r2", task=InlineTask("t", "fix it", timeout_seconds=60), n=1, harness="codex", sampling=Sampling(max_output_tokens=512, temperature=0.7), settings={"max_turns": 5}, model_name="m"))
        self.assertEqual(inline["group"]["task"], {"task_id": "t", "instruction": "fix it", "timeout_seconds": 60})
        self.assertEqual(inline["group"]["agent"], {"harness": "codex", "settings": {"max_turns": 5, "max_output_tokens": 512, "temperature": 0.7}, "env": {}, "model_name": "m"})

    def test_control_frames(self):
        self.assertEqual(json.loads(wire.hello("tr")), {"type": "hello", "protocol_version": 1, "trainer_id": "tr"})
        self.assertEqual(json.loads(wire.ack(["a"])), {"type": "ack", "result_ids": ["a"]})
        self.assertEqual(json.loads(wire.credit(3)), {"type": "credit", "n": 3})
        self.assertEqual(json.loads(wire.resume(2)), {"type": "resume", "version": 2})
        self.assertEqual(json.loads(wire.policy(2)), {"type": "policy", "version": 2})
        self.assertEqual(json.loads(wire.cancel_group("g")), {"type": "cancel_group", "group_id": "g"})
        self.assertEqual(json.loads(wire.pause("p")), {"type": "pause", "request_id": "p"})


if __name__ == "__main__":
    unittest.main()
