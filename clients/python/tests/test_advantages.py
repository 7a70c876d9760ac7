# GRPO advantages by name: sample std (the field's default: TRL GRPOTrainer, verl), population std
# (Polar's coordinator `mean_std`), mean only; equal rewards give exact zeros under every method.
import math
import statistics
import unittest

from polar_client import ADVANTAGE_METHODS, DEFAULT_ADVANTAGE_METHOD, group_advantages
from polar_client.advantages import EPSILON


class AdvantageTest(unittest.TestCase):
    def test_the_default_divides_by_the_sample_standard_deviation(self):
        self.assertEqual(DEFAULT_ADVANTAGE_METHOD, "mean_sample_std")
        rewards = [1.0, 0.0, 0.0, 0.0]
        s = statistics.stdev(rewards)  # n - 1
        self.assertAlmostEqual(s, 0.5)
        expected = [(r - 0.25) / (s + EPSILON) for r in rewards]
        for got, want in zip(group_advantages(rewards), expected):
            self.assertAlmostEqual(got, want, places=12)
        self.assertAlmostEqual(group_advantages(rewards)[0], 1.5, places=5)

    def test_mean_std_divides_by_the_population_standard_deviation(self):
        rewards = [1.0, 0.0, 0.0, 0.0]
        sigma = statistics.pstdev(rewards)  # n
        got = group_advantages(rewards, "mean_std")
        self.assertAlmostEqual(got[0], 0.75 / (sigma + EPSILON), places=12)
        self.assertAlmostEqual(got[0], 0.75 / math.sqrt(0.1875), places=5)
        # Same signs and ordering, different scale: sample std is larger, advantages smaller.
        self.assertLess(group_advantages(rewards)[0], got[0])

    def test_mean_subtracts_the_group_mean_only(self):
        self.assertEqual(group_advantages([1.0, 0.5, 0.0], "mean"), [0.5, 0.0, -0.5])

    def test_equal_rewards_give_exact_zeros_under_every_method(self):
        for method in ADVANTAGE_METHODS:
            for rewards in ([1.0, 1.0, 1.0], [0.0] * 8, [0.1, 0.1, 0.1]):
                self.assertEqual(group_advantages(rewards, method), [0.0] * len(rewards), (method, rewards))

    def test_rollouts_without_a_reward_keep_none_and_stay_out_of_the_statistics(self):
        got = group_advantages([1.0, None, 0.0], "mean_std")
        self.assertIsNone(got[1])
        self.assertAlmostEqual(got[0], 0.5 / (0.5 + EPSILON), places=12)
        self.assertEqual(group_advantages([None, None]), [None, None])
        self.assertEqual(group_advantages([1.0, None]), [0.0, None])  # one scored rollout: no baseline

    def test_bad_input_is_refused(self):
        with self.assertRaises(ValueError):
            group_advantages([1.0, 0.0], "grpo")
        with self.assertRaises(ValueError):
            group_advantages([1.0, float("nan")])


if __name__ == "__main__":
    unittest.main()
