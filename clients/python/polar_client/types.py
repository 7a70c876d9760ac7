"""Why: what a trainer works with, as typed dataclasses — the groups it submits and the finished
groups it receives (rollouts, and under each rollout its traces) — independent of how the
coordinator's frames spell them (that is wire.py's job).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .advantages import DEFAULT_ADVANTAGE_METHOD, group_advantages

ROLLOUT_STATUSES = ("COMPLETED", "ERROR", "TIMEOUT", "CANCELLED")
GROUP_STATUSES = ("completed", "cancelled")
#: Advantage modes the coordinator computes for its own `group` message (see advantages.py for the
#: client's methods).
COORDINATOR_ADVANTAGE_MODES = ("none", "mean", "mean_std")


@dataclass(frozen=True)
class InlineTask:
    """A task described in the submit itself (Polar's TaskRequest fields for the work)."""

    task_id: str
    instruction: str
    runtime: Optional[dict[str, Any]] = None
    evaluator: Optional[dict[str, Any]] = None
    timeout_seconds: Optional[float] = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Sampling:
    """Per-group sampling settings, sent in the agent's settings.

    ``max_output_tokens`` is applied by every harness adapter. ``temperature`` and ``top_p`` travel
    with the request, but today's node applies its own sampling policy (node config
    ``sampling.temperature`` / ``sampling.top_p``) to every call instead.
    """

    max_output_tokens: Optional[int] = None
    temperature: Optional[float] = None
    top_p: Optional[float] = None


@dataclass(frozen=True)
class Submitted:
    group_id: str
    rollout_ids: list[str]


@dataclass(frozen=True)
class Trace:
    """One training sequence of a rollout (several when the builder split the session)."""

    prompt_ids: list[int]
    response_ids: list[int]
    #: 1 where a token was sampled by the policy (trained), 0 for context (tool output, glue).
    loss_mask: list[int]
    #: The engine's logprob of each sampled token; 0.0 where loss_mask is 0.
    response_logprobs: list[float]
    finish_reason: Optional[str]
    reward: Optional[float]
    #: Sequence numbers of the LLM calls this trace holds, and the policy version of each.
    calls: list[int]
    policy_versions: list[int]
    #: The node masked it (an infrastructure failure): nothing in it may be trained.
    masked: bool
    metadata: dict[str, Any]

    @property
    def trainable_tokens(self) -> int:
        return sum(self.loss_mask)


@dataclass(frozen=True)
class Rollout:
    result_id: str
    rollout_id: str
    group_id: str
    status: str
    #: None when no reward could be measured (cancelled, or failed before evaluation).
    reward: Optional[float]
    #: True when the rollout must not be trained on: not COMPLETED, or no unmasked trace.
    masked: bool
    #: What failed (the node's failure cause, e.g. "sandbox_start", "task_timeout", or
    #: "cancelled"); None for a rollout that ran to the end.
    failure_kind: Optional[str]
    error: Optional[str]
    #: Started more than the coordinator's max staleness before the version current at its end.
    stale: bool
    policy_version_started: int
    #: Distinct policy versions its calls were sampled with, ascending.
    policy_versions: list[int]
    timing: dict[str, float]
    node_id: Optional[str]
    traces: list[Trace]
    metadata: dict[str, Any]

    @property
    def num_traces(self) -> int:
        return len(self.traces)

    @property
    def usable(self) -> bool:
        return not self.masked


@dataclass(frozen=True)
class Group:
    """A finished group: every member has exactly one result."""

    group_id: str
    status: str
    #: The submitted task id, when this client submitted the group (the stream does not carry it).
    task_id: Optional[str]
    #: One per member: in the order `submit` returned their ids when this client submitted the
    #: group, else in the coordinator's group-message order.
    rollouts: list[Rollout]
    #: The coordinator's advantages for the submit's `advantages` mode, aligned with `rollouts`.
    coordinator_advantages: list[Optional[float]]

    @property
    def rewards(self) -> list[Optional[float]]:
        """Rewards of the rollouts a trainer may learn from; None for masked ones."""
        return [r.reward if r.usable else None for r in self.rollouts]

    def advantages(self, method: str = DEFAULT_ADVANTAGE_METHOD) -> list[Optional[float]]:
        """GRPO advantages over the usable rollouts (advantages.py documents the formulas)."""
        return group_advantages(self.rewards, method)

    @property
    def result_ids(self) -> list[str]:
        return [r.result_id for r in self.rollouts]
