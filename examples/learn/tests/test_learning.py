# The learning example's math without Polar: the trainer's copy of the engine's policy (the
# decision token, logprobs, gradients), the check that recorded logprobs are the policy's own,
# the clipped GRPO update, a seeded bandit run that climbs from 0.2, and the SVG curve.
import math
import random
import sys
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[2] / "clients" / "python"))

from choice_policy import ChoicePolicy  # noqa: E402
from grpo import Adam, group_staleness, grpo_update, logprob_mismatches, training_row  # noqa: E402
from plot import reward_curve_svg  # noqa: E402
from polar_client import group_advantages  # noqa: E402

SOLVE, MIS = 31999, 24318


def policy(p=0.2, tasks=("a", "b")):
    return ChoicePolicy(list(tasks), [SOLVE, MIS], [math.log(p), math.log(1 - p)], {t: [0.0, 0.0] for t in tasks})


def rollout(choice_token, logprob, version=0):
    """Call 0: `<think>`, newline, the choice word (2 tokens); call 1 later (deterministic tokens)."""
    first = SimpleNamespace(response_ids=[151667, 198, choice_token, 3641, 5, 6], loss_mask=[1] * 6, response_logprobs=[0.0, 0.0, logprob, 0.0, 0.0, 0.0], calls=[0], policy_versions=[version])
    later = SimpleNamespace(response_ids=[7, SOLVE, 8], loss_mask=[1, 1, 1], response_logprobs=[0.0, 0.0, 0.0], calls=[1], policy_versions=[version + 1])
    return SimpleNamespace(traces=[later, first])  # out of call order on purpose


class ChoicePolicyTest(unittest.TestCase):
    def test_the_decision_is_the_first_trained_choice_token_in_call_order(self):
        p = policy()
        d = p.decision(rollout(MIS, math.log(0.8)).traces)
        self.assertEqual((d.trace, d.token, d.choice), (1, 2, 1))
        masked = SimpleNamespace(response_ids=[SOLVE], loss_mask=[0], response_logprobs=[0.0], calls=[0], policy_versions=[0])
        self.assertIsNone(p.decision([masked]))

    def test_logprobs_and_gradients(self):
        p = policy(0.2)
        self.assertAlmostEqual(p.logprob("a", 0), math.log(0.2), places=12)
        p.task_logits["a"] = [0.5, -0.25]
        for choice in (0, 1):
            grad = p.grad_logprob("a", choice)
            base = p.vector()
            for index, g in grad.items():
                bumped = list(base)
                bumped[index] += 1e-6
                q = p.copy()
                q.set_vector(bumped)
                self.assertAlmostEqual((q.logprob("a", choice) - p.logprob("a", choice)) / 1e-6, g, places=5)
        self.assertEqual(set(p.grad_logprob("b", 0)), {0, 1, 4, 5})  # shared bias and b's own logits

    def test_recorded_logprobs_are_checked_against_the_sampling_version(self):
        history = {0: policy(0.2), 1: policy(0.6)}
        self.assertEqual(logprob_mismatches(history, "a", rollout(SOLVE, math.log(0.2), version=0)), 0)
        self.assertEqual(logprob_mismatches(history, "a", rollout(SOLVE, math.log(0.6), version=1)), 0)
        self.assertEqual(logprob_mismatches(history, "a", rollout(SOLVE, math.log(0.6), version=0)), 1)
        self.assertIsNone(logprob_mismatches(history, "a", rollout(SOLVE, math.log(0.2), version=7)))
        noisy = rollout(SOLVE, math.log(0.2))
        noisy.traces[0].response_logprobs[0] = -0.5  # a deterministic token with a logprob
        self.assertEqual(logprob_mismatches(history, "a", noisy), 1)


class GrpoTest(unittest.TestCase):
    def test_positive_advantage_on_solve_raises_its_probability(self):
        p = policy(0.2)
        rows = [training_row(p, "a", rollout(SOLVE, math.log(0.2)), 1.5), training_row(p, "a", rollout(MIS, math.log(0.8)), -0.5)]
        self.assertEqual((rows[0].choice, rows[0].trainable_tokens), (0, 9))
        stats = grpo_update(p, rows, Adam(lr=0.1), epochs=1)
        self.assertGreater(p.probabilities("a")[0], 0.2)
        self.assertGreater(p.probabilities("b")[0], 0.2)  # through the shared bias
        self.assertEqual((stats.rows_with_gradient, stats.clipped_fraction, stats.mean_ratio), (2, 0.0, 1.0))

    def test_a_ratio_beyond_the_clip_gives_no_gradient(self):
        p = policy(0.2)
        # Sampled when π(solve) was 0.05: ratio 4 > 1 + ε with a positive advantage → clipped.
        rows = [training_row(p, "a", rollout(SOLVE, math.log(0.05)), 1.0)]
        before = p.vector()
        stats = grpo_update(p, rows, Adam(lr=0.1), epochs=1)
        self.assertEqual(stats.clipped_fraction, 1.0)
        self.assertAlmostEqual(stats.mean_ratio, 4.0, places=9)
        self.assertEqual(p.vector(), before)

    def test_staleness_counts_from_the_oldest_call(self):
        group = SimpleNamespace(rollouts=[rollout(SOLVE, 0.0, version=3), rollout(MIS, 0.0, version=2)])
        self.assertEqual(group_staleness(group, 4), 2)  # a call at version 2
        callless = SimpleNamespace(rollouts=[SimpleNamespace(traces=[], policy_version_started=4)])
        self.assertEqual(group_staleness(callless, 4), 0)

    def test_a_seeded_bandit_run_climbs_from_0_2(self):
        rng = random.Random(0)
        p = policy(0.2, tasks=[f"t{i}" for i in range(16)])
        optimiser = Adam(lr=0.5)
        curve = []
        for _ in range(8):
            rows, rewards = [], []
            for task in rng.sample(p.tasks, 8):
                group = []
                for _ in range(4):
                    choice = 0 if rng.random() < p.probabilities(task)[0] else 1
                    group.append((rollout([SOLVE, MIS][choice], p.logprob(task, choice)), 1.0 - choice))
                for (r, reward), a in zip(group, group_advantages([g[1] for g in group])):
                    rows.append(training_row(p, task, r, a))
                    rewards.append(reward)
            curve.append(sum(rewards) / len(rewards))
            grpo_update(p, rows, optimiser)
        self.assertLess(curve[0], 0.4)
        self.assertGreaterEqual(sum(curve[-2:]) / 2, 0.9)


class PlotTest(unittest.TestCase):
    def test_the_curve_is_an_svg_with_one_point_per_step(self):
        root = ET.fromstring(reward_curve_svg([1, 2, 3], [0.2, 0.5, 0.9], [0.2, 0.6, 0.95], "t & <title>"))
        ns = "{http://www.w3.org/2000/svg}"
        self.assertEqual(root.tag, f"{ns}svg")
        lines = root.findall(f"{ns}polyline")
        self.assertEqual([len(l.get("points").split()) for l in lines], [3, 3])
        self.assertEqual(len(root.findall(f"{ns}circle")), 3)


if __name__ == "__main__":
    unittest.main()
