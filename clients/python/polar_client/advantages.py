"""Why: GRPO advantages within a group, by name, with the formula written down once.

For the rewards r_1..r_k of a group's scored rollouts (mean μ = Σ r_i / k):

- ``"mean_sample_std"`` (the default): A_i = (r_i − μ) / (s + ε), s = sqrt(Σ (r_i − μ)² / (k − 1)),
  the sample (Bessel-corrected) standard deviation. This is what the field's GRPO trainers compute:
  TRL's ``GRPOTrainer`` (``nanstd`` with Bessel's correction, ε = 1e-4) and verl's
  ``compute_grpo_outcome_advantage`` (``torch.std``, unbiased by default, ε = 1e-6).
- ``"mean_std"``: A_i = (r_i − μ) / (σ + ε), σ = sqrt(Σ (r_i − μ)² / k), the population standard
  deviation — what Polar's coordinator sends in its ``group`` message for ``advantages: "mean_std"``
  (and what TRL's experimental async GRPO worker computes with numpy's default ``std``).
- ``"mean"``: A_i = r_i − μ (Dr. GRPO; the coordinator's ``"mean"``).

ε = 1e-6 here. A group whose scored rewards are all equal gets exactly 0.0 for every scored
rollout under every method (no spread, no signal), and so does a group with a single scored
rollout (there is no baseline to compare it with; verl would hand back the raw reward instead).
Rollouts without a reward (None: cancelled, or failed before one could be measured) get None and do
not enter μ or the standard deviation.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

ADVANTAGE_METHODS = ("mean_sample_std", "mean_std", "mean")
DEFAULT_ADVANTAGE_METHOD = "mean_sample_std"
EPSILON = 1e-6


def group_advantages(rewards: Sequence[Optional[float]], method: str = DEFAULT_ADVANTAGE_METHOD) -> list[Optional[float]]:
    """The advantage of each reward in its group (None where the reward is None)."""
    if method not in ADVANTAGE_METHODS:
        raise ValueError(f"unknown advantage method {method!r}; expected one of {', '.join(ADVANTAGE_METHODS)}")
    scored = [float(r) for r in rewards if r is not None]
    for r in scored:
        if not math.isfinite(r):
            raise ValueError(f"rewards must be finite numbers, got {r!r}")
    if len(scored) < 2 or all(r == scored[0] for r in scored):
        return [None if r is None else 0.0 for r in rewards]
    mean = sum(scored) / len(scored)
    squares = sum((r - mean) ** 2 for r in scored)
    if method == "mean":
        scale = 1.0
    elif method == "mean_std":
        scale = math.sqrt(squares / len(scored)) + EPSILON
    else:
        scale = math.sqrt(squares / (len(scored) - 1)) + EPSILON
    return [None if r is None else (float(r) - mean) / scale for r in rewards]
