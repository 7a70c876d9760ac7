"""Why: what a trainer works with, as typed dataclasses — the groups it submits and the finished
groups it receives (rollouts, and under each rollout its traces) — independent of how the
coordinator's frames spell them (that is wire.py's job).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from .advantages import DEFAULT_ADVANTAGE_METHOD, group_advantages

ROLLOUT_STATUSES = ("COMPLETED", "ERROR", "TIMEOUT", "CANCELLED")
GROUP_STATUSES = ("completed", "cancelled")
#: Advantage modes the coordinator computes for its own `group` message (see advantages.py for the
#: client's methods).
COORDINATOR_ADVANTAGE_MODES = ("none", "mean", "mean_std")
#: Where a flat group's replacement comes from (ReplaceFlat.source).
REPLACE_FLAT_SOURCES = ("same_task", "next_task")
#: Why a flat group that asked for a replacement got none (Group.replacement_exhausted).
REPLACEMENT_EXHAUSTED_REASONS = ("max_replacements", "no_more_tasks", "task_not_found")


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
class ReplaceFlat:
    """Dynamic sampling: replace a flat group (rewards without spread) by a fresh group.

    ``same_task`` runs the same task again; ``next_task`` runs the next task of ``tasks`` (task ids
    of the coordinator's task file, or InlineTask), one per replacement. One submitted group gets
    at most ``max_replacements`` replacements; the flat group is still handed out, with
    ``replaced_by`` naming its replacement.
    """

    max_replacements: int
    source: str = "same_task"
    tasks: tuple[Union[str, InlineTask], ...] = ()


@dataclass(frozen=True)
class TaskStat:
    """The coordinator's pass-rate estimate of one task (decayed over its recent groups)."""

    task_id: str
    pass_rate: float
    mean_reward: float
    #: Effective number of rollouts behind the estimate.
    weight: float
    groups: int
    rollouts: int
    flat_groups: int
    #: |pass_rate - target| when the query named a target, else None.
    distance: Optional[float]
    updated_at: str


@dataclass(frozen=True)
class TaskStats:
    target_pass_rate: Optional[float]
    half_life_groups: float
    #: Nearest the target first (by task id without a target).
    tasks: list[TaskStat]
    #: Ids asked for (or of the coordinator's task file) that no completed group has measured yet.
    unmeasured: list[str]


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
    #: The task the group ran (a replacement may run another task than the group it replaces).
    task_id: Optional[str]
    #: One per member: in the order `submit` returned their ids when this client submitted the
    #: group, else in the coordinator's group-message order.
    rollouts: list[Rollout]
    #: The coordinator's advantages for the submit's `advantages` mode, aligned with `rollouts`.
    coordinator_advantages: list[Optional[float]]
    #: Population std of the rewards (None with fewer than two).
    reward_std: Optional[float] = None
    #: Completed with reward_std at or below the submit's min_reward_std (0 when not given): no
    #: GRPO signal. Flat groups are handed out like any other; skipping them is the caller's choice.
    flat: bool = False
    #: 0 for a submitted group, k for the k-th replacement of its chain.
    replacement_index: int = 0
    #: The flat group this one was started in place of (ReplaceFlat).
    replaces: Optional[str] = None
    #: The fresh group started in place of this flat one: it will arrive as a group of its own.
    replaced_by: Optional[str] = None
    #: Flat, replacement asked, none started: one of REPLACEMENT_EXHAUSTED_REASONS.
    replacement_exhausted: Optional[str] = None

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
