"""Why: verl's agent loop hands its trainer one row per trajectory (volcengine/verl@b178a3c):
`AgentLoopOutput` (verl/experimental/agent_loop/agent_loop.py) has `prompt_ids`, `response_ids`,
`response_mask` (1 for generated tokens, 0 for tool output) and `reward_score`; its post-processing
stores the rollout engine's logprobs as the batch column `rollout_log_probs`; GRPO groups rows by
the non-tensor column `uid` (one per prompt group); the fully asynchronous trainer tags each row
with `param_version_start` / `param_version_end` (verl/experimental/fully_async_policy/).

One dict per trained trace with exactly those columns, plus `traces_in_rollout`.
"""

from __future__ import annotations

from typing import Any

from ..types import Group
from .common import newest_version, oldest_version, trained_rollouts


def to_verl_outputs(group: Group) -> list[dict[str, Any]]:
    """verl agent-loop rows; `uid` is the Polar group id (verl computes the GRPO advantage itself
    from `reward_score` within a `uid`)."""
    rows = []
    for item in trained_rollouts(group):
        for trace in item.traces:
            rows.append(
                {
                    "prompt_ids": list(trace.prompt_ids),
                    "response_ids": list(trace.response_ids),
                    "response_mask": list(trace.loss_mask),
                    "rollout_log_probs": list(trace.response_logprobs),
                    "reward_score": float(item.reward),
                    "uid": group.group_id,
                    "param_version_start": oldest_version(item.rollout, trace),
                    "param_version_end": newest_version(item.rollout, trace),
                    "traces_in_rollout": len(item.traces),
                }
            )
    return rows
