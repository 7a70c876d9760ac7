"""Why: slime trains on `Sample`s (slime/utils/types.py, THUDM/slime@624b824): `tokens` is prompt
plus response, `response_length` the response's length, `loss_mask` and `rollout_log_probs` run
over the response only, `reward` may be a dict read by `--reward-key` (here `{"score": r}`),
`status` is a `Sample.Status` value, `group_index` / `index` number the groups and samples of a
rollout batch, and samples split from one execution share a `rollout_id` so the loss averages
within the rollout (slime/ray/rollout.py). `weight_versions` lists the policy versions used.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..types import Group, Rollout, Trace
from .common import trained_rollouts


def slime_status(rollout: Rollout, trace: Trace) -> str:
    """Polar's status as a slime `Sample.Status` value (only usable rollouts reach an adapter)."""
    if rollout.status == "CANCELLED":
        return "aborted"
    if rollout.status != "COMPLETED":
        return "failed"
    return "truncated" if trace.finish_reason == "length" else "completed"


def to_slime_samples(groups: Sequence[Group]) -> list[dict[str, Any]]:
    """slime Sample fields for a batch of groups, numbered as slime numbers a rollout batch."""
    rows: list[dict[str, Any]] = []
    rollout_index = 0
    for group_index, group in enumerate(groups):
        for item in trained_rollouts(group):
            for trace in item.traces:
                rows.append(
                    {
                        "group_index": group_index,
                        "index": len(rows),
                        "rollout_id": rollout_index,
                        "tokens": list(trace.prompt_ids) + list(trace.response_ids),
                        "response_length": len(trace.response_ids),
                        "loss_mask": list(trace.loss_mask),
                        "rollout_log_probs": list(trace.response_logprobs),
                        "reward": {"score": float(item.reward)},
                        "status": slime_status(item.rollout, trace),
                        "weight_versions": [str(v) for v in trace.policy_versions],
                        "metadata": {"polar_group_id": group.group_id, "polar_rollout_id": item.rollout.rollout_id, "traces_in_rollout": len(item.traces)},
                    }
                )
            rollout_index += 1
    return rows
