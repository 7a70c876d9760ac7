"""Why: trainers consume rollouts in their own shapes. Each adapter is a plain function from
finished Polar groups to the rows one framework documents — no framework is imported — and each
rollout that became several traces says how many (`traces_in_rollout`), so a loss can be
normalised per rollout rather than per row.

Every adapter emits rows for the usable rollouts only (masked ones — infrastructure failures —
carry no outcome to learn from) and, within them, for the traces with at least one trained token.
"""

from .openrlhf import to_openrlhf_outputs
from .slime import to_slime_samples
from .trl import PolarRolloutWorker, to_trl_samples
from .verl import to_verl_outputs
from .common import stable_group_index

__all__ = ["to_trl_samples", "PolarRolloutWorker", "to_verl_outputs", "to_slime_samples", "to_openrlhf_outputs", "stable_group_index"]
