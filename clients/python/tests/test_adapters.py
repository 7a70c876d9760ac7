# Each adapter's rows against the fields its framework documents (read at the commits named below;
# no framework is imported), their values derived from one multi-trace group, and the trace count
# a rollout carries so per-rollout loss normalisation is possible.
import unittest

from polar_client import wire
from polar_client.adapters import PolarRolloutWorker, stable_group_index, to_openrlhf_outputs, to_slime_samples, to_trl_samples, to_verl_outputs
from polar_client.adapters.openrlhf import action_ranges
from polar_client.assembler import GroupAssembler
from fixtures import group_frame, result_frame, trace

# huggingface/trl@f2cd577 trl/experimental/async_grpo/async_rollout_worker.py, `class RolloutSample`.
TRL_ROLLOUT_SAMPLE = ["prompt", "completion", "input_ids", "completion_mask", "old_log_probs", "advantage", "model_version", "group_id", "metrics"]
# ...and trl/experimental/async_grpo/async_grpo_trainer.py, `class RolloutWorkerProtocol`.
TRL_WORKER_PROTOCOL = ["start", "stop", "update_model_version", "check_health"]
# volcengine/verl@b178a3c: AgentLoopOutput (prompt_ids, response_ids, response_mask, reward_score)
# in verl/experimental/agent_loop/agent_loop.py; the batch column rollout_log_probs (same file);
# the non-tensor uid (GRPO's group index); param_version_start / param_version_end in
# verl/experimental/fully_async_policy/agent_loop/.
VERL_ROW = ["prompt_ids", "response_ids", "response_mask", "rollout_log_probs", "reward_score", "uid", "param_version_start", "param_version_end"]
# THUDM/slime@624b824 slime/utils/types.py, `class Sample` (all of its fields; the adapter fills a subset).
SLIME_SAMPLE = ["group_index", "index", "rollout_id", "prompt", "tokens", "multimodal_inputs", "multimodal_train_inputs", "multimodal_train_input_id", "apply_chat_template_kwargs", "response", "response_length", "label", "reward", "loss_mask", "weight_versions", "rollout_log_probs", "rollout_top_p_token_ids", "rollout_top_p_token_offsets", "rollout_routed_experts", "remove_sample", "teacher_log_probs", "status", "metadata", "generate_function_path", "custom_rm_path", "train_metadata", "session_id", "non_generation_time", "spec_info", "prefix_cache_info"]
SLIME_STATUS = ["pending", "completed", "truncated", "aborted", "failed"]
# OpenRLHF/OpenRLHF@3c3be62 openrlhf/utils/agent.py, the multi-turn executor's final_response; the
# samples generator (openrlhf/trainer/ppo_utils/samples_generator.py) also reads `truncated`.
OPENRLHF_OUTPUT = ["prompt", "label", "images", "mm_train_inputs", "reward", "scores", "observation_tokens", "action_ranges", "rollout_log_probs", "extra_logs", "truncated"]

# The fields issue 18 names for each framework.
ISSUE_FIELDS = {
    "trl": ["input_ids", "completion_mask", "old_log_probs", "advantage", "model_version", "group_id"],
    "verl": ["prompt_ids", "response_ids", "response_mask", "rollout_log_probs", "uid", "param_version_start", "param_version_end"],
    "slime": ["tokens", "response_length", "loss_mask", "rollout_log_probs", "reward", "status", "group_index"],
    "openrlhf": ["action_ranges", "rollout_log_probs"],
}


def group():
    """Rollout a: two traces (calls at versions 1 and 2), reward 1; b: one trace, reward 0, cut by
    length; c: masked (infrastructure failure)."""
    assembler = GroupAssembler()
    a = [trace(prompt=(1, 2), response=(5, 6, 7, 8), mask=(1, 1, 0, 1), logprobs=(-0.1, -0.2, 0.0, -0.3), calls=(0,), versions=(1,)),
         trace(prompt=(1, 2, 5, 6, 7, 8, 9), response=(20, 21), mask=(1, 1), logprobs=(-0.4, -0.5), calls=(1,), versions=(2,))]
    b = [trace(prompt=(1, 2), response=(30, 31, 32), mask=(0, 1, 1), logprobs=(0.0, -0.6, -0.7), finish="length", versions=(1,), reward=0.0)]
    c = [trace(mask=(0, 0, 0, 0), logprobs=(0, 0, 0, 0), masked=True, reward=0.0)]
    frames = [result_frame("a", "grp_x", traces=a, versions=(1, 2), started=1), result_frame("b", "grp_x", reward=0.0, traces=b, versions=(1,), started=1),
              result_frame("c", "grp_x", status="ERROR", reward=0.0, traces=c, metadata={"failure": {"cause": "evaluator"}}), group_frame("grp_x", ["a", "b", "c"], [1.0, 0.0, 0.0])]
    out = None
    for raw in frames:
        frame = wire.parse_frame(raw)
        out = assembler.add_rollout(frame.rollout) if isinstance(frame, wire.ResultFrame) else assembler.add_group_frame(frame)
    return out


class AdapterTest(unittest.TestCase):
    def setUp(self):
        self.group = group()
        self.advantages = self.group.advantages()  # a: +0.707, b: -0.707, c: None (masked)

    def test_trl_rollout_samples(self):
        rows = to_trl_samples(self.group)
        self.assertEqual([list(r) for r in rows], [TRL_ROLLOUT_SAMPLE] * 3)
        for field in ISSUE_FIELDS["trl"]:
            self.assertIn(field, TRL_ROLLOUT_SAMPLE)
        first, second, third = rows
        self.assertEqual(first["input_ids"], [1, 2, 5, 6, 7, 8])
        self.assertEqual(first["completion_mask"], [0, 0, 1, 1, 0, 1])
        self.assertEqual(first["old_log_probs"], [0.0, 0.0, -0.1, -0.2, 0.0, -0.3])
        self.assertEqual(len(second["input_ids"]), len(second["completion_mask"]))
        self.assertEqual(len(second["input_ids"]), len(second["old_log_probs"]))
        self.assertAlmostEqual(first["advantage"], self.advantages[0])
        self.assertAlmostEqual(third["advantage"], self.advantages[1])
        self.assertEqual([r["model_version"] for r in rows], [1, 2, 1])
        self.assertEqual({r["group_id"] for r in rows}, {stable_group_index("grp_x")})
        self.assertIsInstance(first["group_id"], int)
        self.assertEqual([r["metrics"]["traces_in_rollout"] for r in rows], [2.0, 2.0, 1.0])
        self.assertEqual(to_trl_samples(self.group, group_index=7)[0]["group_id"], 7)

    def test_trl_rollout_worker_protocol(self):
        for method in TRL_WORKER_PROTOCOL:
            self.assertTrue(callable(getattr(PolarRolloutWorker, method)), method)

        class FakeClient:
            def __init__(self, groups):
                self.groups, self.versions, self.submits = list(groups), [], 0

            def submit(self, *a, **k):
                self.submits += 1

            def next_group(self, timeout=None):
                if not self.groups:
                    import time
                    time.sleep(timeout)
                    raise type("E", (Exception,), {"code": "timeout"})()
                return self.groups.pop(0)

            def set_policy_version(self, v):
                self.versions.append(v)

        client = FakeClient([self.group])
        worker = PolarRolloutWorker(client, lambda c: c.submit("t", n=3), groups_in_flight=2)
        self.assertTrue(hasattr(worker.rollout_buffer, "get") and hasattr(worker.rollout_buffer, "qsize"))
        worker.start()
        rows = [worker.rollout_buffer.get(timeout=5) for _ in range(3)]
        worker.check_health(stale_after_s=60)
        worker.update_model_version(4)
        worker.stop()
        self.assertEqual(client.versions, [4])
        self.assertGreaterEqual(client.submits, 2)
        self.assertEqual([list(r) for r in rows], [TRL_ROLLOUT_SAMPLE] * 3)
        with self.assertRaises(RuntimeError):
            worker.check_health(stale_after_s=60)  # stopped

    def test_verl_agent_loop_rows(self):
        rows = to_verl_outputs(self.group)
        self.assertEqual([sorted(r) for r in rows], [sorted(VERL_ROW + ["traces_in_rollout"])] * 3)
        for field in ISSUE_FIELDS["verl"]:
            self.assertIn(field, VERL_ROW)
        first = rows[0]
        self.assertEqual((first["prompt_ids"], first["response_ids"], first["response_mask"]), ([1, 2], [5, 6, 7, 8], [1, 1, 0, 1]))
        self.assertEqual(first["rollout_log_probs"], [-0.1, -0.2, 0.0, -0.3])
        self.assertEqual({r["uid"] for r in rows}, {"grp_x"})  # one uid per group
        self.assertEqual([(r["param_version_start"], r["param_version_end"]) for r in rows], [(1, 1), (2, 2), (1, 1)])
        self.assertEqual([r["reward_score"] for r in rows], [1.0, 1.0, 0.0])
        self.assertEqual([r["traces_in_rollout"] for r in rows], [2, 2, 1])

    def test_slime_samples(self):
        rows = to_slime_samples([self.group, self.group])
        for row in rows:
            self.assertTrue(set(row) <= set(SLIME_SAMPLE), set(row) - set(SLIME_SAMPLE))
            self.assertIn(row["status"], SLIME_STATUS)
            self.assertEqual(len(row["loss_mask"]), row["response_length"])
            self.assertEqual(len(row["rollout_log_probs"]), row["response_length"])
        for field in ISSUE_FIELDS["slime"]:
            self.assertIn(field, rows[0])
        self.assertEqual([r["group_index"] for r in rows], [0, 0, 0, 1, 1, 1])
        self.assertEqual([r["index"] for r in rows], [0, 1, 2, 3, 4, 5])
        self.assertEqual([r["rollout_id"] for r in rows], [0, 0, 1, 2, 2, 3])  # siblings share one
        first = rows[0]
        self.assertEqual(first["tokens"], [1, 2, 5, 6, 7, 8])
        self.assertEqual(first["response_length"], 4)
        self.assertEqual(first["reward"], {"score": 1.0})
        self.assertEqual([r["status"] for r in rows[:3]], ["completed", "completed", "truncated"])
        self.assertEqual(rows[1]["weight_versions"], ["2"])
        self.assertEqual(first["metadata"]["traces_in_rollout"], 2)

    def test_openrlhf_agent_outputs(self):
        rows = to_openrlhf_outputs(self.group)
        self.assertEqual([sorted(r) for r in rows], [sorted(OPENRLHF_OUTPUT)] * 3)
        for field in ISSUE_FIELDS["openrlhf"]:
            self.assertIn(field, OPENRLHF_OUTPUT)
        first, _, third = rows
        self.assertEqual(first["observation_tokens"], [1, 2, 5, 6, 7, 8])
        self.assertEqual(first["action_ranges"], [(2, 4), (5, 6)])  # runs of the mask, after the prompt
        self.assertEqual(first["rollout_log_probs"], [0.0, 0.0, -0.1, -0.2, 0.0, -0.3])
        self.assertEqual(len(first["rollout_log_probs"]), len(first["observation_tokens"]))
        for row in rows:
            inside = {i for start, end in row["action_ranges"] for i in range(start, end)}
            self.assertTrue(all(lp == 0.0 for i, lp in enumerate(row["rollout_log_probs"]) if i not in inside))
        self.assertTrue(third["truncated"])
        self.assertEqual([r["extra_logs"]["traces_in_rollout"] for r in rows], [2, 2, 1])
        self.assertEqual(action_ranges([1, 1, 1], 0), [(0, 3)])
        self.assertEqual(action_ranges([0, 0], 3), [])

    def test_masked_rollouts_are_left_out(self):
        for rows in (to_trl_samples(self.group), to_verl_outputs(self.group), to_openrlhf_outputs(self.group), to_slime_samples([self.group])):
            self.assertEqual(len(rows), 3)  # a's two traces and b's; c is masked


if __name__ == "__main__":
    unittest.main()
