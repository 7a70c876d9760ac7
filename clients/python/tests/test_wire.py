# The wire layer: frames from the coordinator parsed field by field into typed rollouts and traces
# (masked, failure kind, per-call policy versions read from where the node puts them), anything
# malformed refused, and frames to the coordinator built with the schema's names.
import json
import unittest

from polar_client import InlineTask, PolarClientError, ReplaceFlat, Sampling, wire
from fixtures import group_frame, result, result_frame, task_stat, task_stats_frame, trace


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

    def test_a_flat_group_and_its_replacement_link(self):
        flat = wire.parse_frame(group_frame("g1", ["a", "b"], [1.0, 1.0], task_id="t", reward_std=0, flat=True, replacement_index=0, replaces=None, replaced_by="g2", replacement_exhausted=None))
        self.assertEqual((flat.task_id, flat.reward_std, flat.flat, flat.replacement_index, flat.replaces, flat.replaced_by, flat.replacement_exhausted), ("t", 0.0, True, 0, None, "g2", None))
        last = wire.parse_frame(group_frame("g2", ["c"], [0.0], task_id="u", reward_std=None, flat=False, replacement_index=1, replaces="g1", replaced_by=None, replacement_exhausted="max_replacements"))
        self.assertEqual((last.replaces, last.replacement_index, last.replacement_exhausted, last.reward_std), ("g1", 1, "max_replacements", None))
        # A coordinator older than dynamic sampling sends none of these fields: the defaults.
        old = wire.parse_frame(group_frame("g3", ["d"], [1.0]))
        self.assertEqual((old.task_id, old.reward_std, old.flat, old.replaced_by, old.replacement_exhausted), (None, None, False, None, None))

    def test_task_stats(self):
        frame = wire.parse_frame(task_stats_frame("r", [task_stat("b", 0.5, 0.0), task_stat("a", 1.0, 0.5, groups=2)], target=0.5, unmeasured=["c"]))
        self.assertIsInstance(frame, wire.TaskStatsFrame)
        self.assertEqual(frame.request_id, "r")
        self.assertEqual((frame.stats.target_pass_rate, frame.stats.half_life_groups, frame.stats.unmeasured), (0.5, 4.0, ["c"]))
        self.assertEqual([(t.task_id, t.pass_rate, t.distance, t.groups) for t in frame.stats.tasks], [("b", 0.5, 0.0, 1), ("a", 1.0, 0.5, 2)])

    def test_malformed_frames_are_refused(self):
        bad = [
            b"\x00binary",
            "not json",
            "[]",
            '{"type":"nope"}',
            '{"type":"paused","request_id":"r","nodes":true}',
            '{"type":"resumed","policy_version":1.5}',
            group_frame("g", ["a", "b"], [1.0]),
            group_frame("g", ["a"], [1.0], flat="yes"),
            group_frame("g", ["a"], [1.0], replacement_exhausted="tired"),
            group_frame("g", ["a"], [1.0], reward_std="0"),
            task_stats_frame("r", [{**task_stat("a", 0.5), "groups": 1.5}]),
            json.dumps({"type": "task_stats", "request_id": "r", "tasks": []}),
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

    def test_submit_with_dynamic_sampling(self):
        same = json.loads(wire.submit("r3", task="t", n=4, harness="mini", min_reward_std=0.0, replace_flat=ReplaceFlat(2)))["group"]
        self.assertEqual((same["min_reward_std"], same["replace_flat"]), (0.0, {"max_replacements": 2, "source": "same_task"}))
        nxt = json.loads(wire.submit("r4", task="t", n=4, harness="mini", replace_flat=ReplaceFlat(3, "next_task", ("u", InlineTask("v", "do v")))))["group"]
        self.assertNotIn("min_reward_std", nxt)
        self.assertEqual(nxt["replace_flat"], {"max_replacements": 3, "source": "next_task", "tasks": ["u", {"task_id": "v", "instruction": "do v"}]})
        plain = json.loads(wire.submit("r5", task="t", n=1, harness="mini"))["group"]
        self.assertNotIn("replace_flat", plain)

    def test_control_frames(self):
        self.assertEqual(json.loads(wire.hello("tr")), {"type": "hello", "protocol_version": 1, "trainer_id": "tr", "encoding": "binary"})
        self.assertEqual(json.loads(wire.ack(["a"])), {"type": "ack", "result_ids": ["a"]})
        self.assertEqual(json.loads(wire.credit(3)), {"type": "credit", "n": 3})
        self.assertEqual(json.loads(wire.resume(2)), {"type": "resume", "version": 2})
        self.assertEqual(json.loads(wire.policy(2)), {"type": "policy", "version": 2})
        self.assertEqual(json.loads(wire.cancel_group("g")), {"type": "cancel_group", "group_id": "g"})
        self.assertEqual(json.loads(wire.pause("p")), {"type": "pause", "request_id": "p"})
        self.assertEqual(json.loads(wire.task_stats("q")), {"type": "task_stats", "request_id": "q", "limit": 100})
        self.assertEqual(json.loads(wire.task_stats("q", task_ids=["a"], target_pass_rate=0.5, limit=3)), {"type": "task_stats", "request_id": "q", "limit": 3, "task_ids": ["a"], "target_pass_rate": 0.5})


if __name__ == "__main__":
    unittest.main()
