"""Why: OpenRLHF's multi-turn agent executor (openrlhf/utils/agent.py, OpenRLHF/OpenRLHF@3c3be62)
returns one dict per trajectory: `observation_tokens` (the whole sequence), `action_ranges`
(`(start, end)` spans of generated tokens in it), `rollout_log_probs` over the whole sequence with
0.0 outside the actions, `reward` and `scores`, `extra_logs`, and the echoed `prompt`, `label`,
`images`, `mm_train_inputs`; the samples generator also reads `truncated`
(openrlhf/trainer/ppo_utils/samples_generator.py).
"""

from __future__ import annotations

from typing import Any

from ..types import Group
from .common import trained_rollouts


def action_ranges(loss_mask: list[int], offset: int) -> list[tuple[int, int]]:
    """Runs of 1 in the mask as half-open (start, end) spans, shifted by `offset`."""
    spans = []
    start = None
    for i, bit in enumerate(loss_mask):
        if bit == 1 and start is None:
            start = i
        elif bit != 1 and start is not None:
            spans.append((offset + start, offset + i))
            start = None
    if start is not None:
        spans.append((offset + start, offset + len(loss_mask)))
    return spans


def to_openrlhf_outputs(group: Group) -> list[dict[str, Any]]:
    """OpenRLHF agent-executor outputs, one per trained trace."""
    rows = []
    for item in trained_rollouts(group):
        for trace in item.traces:
            prompt_len = len(trace.prompt_ids)
            rows.append(
                {
                    "prompt": "",
                    "label": "",
                    "images": None,
                    "mm_train_inputs": None,
                    "reward": float(item.reward),
                    "scores": float(item.reward),
                    "observation_tokens": list(trace.prompt_ids) + list(trace.response_ids),
                    "action_ranges": action_ranges(trace.loss_mask, prompt_len),
                    "rollout_log_probs": [0.0] * prompt_len + [lp if m == 1 else 0.0 for lp, m in zip(trace.response_logprobs, trace.loss_mask)],
                    "truncated": trace.finish_reason == "length",
                    "extra_logs": {"traces_in_rollout": len(item.traces)},
                }
            )
    return rows
