"""Why: what every adapter needs from a group — the trained traces of each usable rollout, with
their advantage — written once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterator, Optional

from ..advantages import DEFAULT_ADVANTAGE_METHOD
from ..types import Group, Rollout, Trace


@dataclass(frozen=True)
class TrainedRollout:
    rollout: Rollout
    #: The rollout's traces that hold at least one trained token, in the order the node sent them.
    traces: list[Trace]
    reward: float
    advantage: float


def trained_rollouts(group: Group, method: str = DEFAULT_ADVANTAGE_METHOD) -> Iterator[TrainedRollout]:
    """Usable rollouts with a reward, with their group advantage and trained traces."""
    for rollout, advantage in zip(group.rollouts, group.advantages(method)):
        if rollout.masked or rollout.reward is None or advantage is None:
            continue
        traces = [t for t in rollout.traces if not t.masked and t.trainable_tokens > 0]
        if traces:
            yield TrainedRollout(rollout, traces, rollout.reward, advantage)


def stable_group_index(group_id: str) -> int:
    """A non-negative 60-bit integer for a Polar group id, for frameworks whose group ids are ints."""
    return int(hashlib.sha256(group_id.encode("utf-8")).hexdigest()[:15], 16)


def oldest_version(rollout: Rollout, trace: Optional[Trace] = None) -> int:
    versions = trace.policy_versions if trace is not None and trace.policy_versions else rollout.policy_versions
    return min(versions) if versions else rollout.policy_version_started


def newest_version(rollout: Rollout, trace: Optional[Trace] = None) -> int:
    versions = trace.policy_versions if trace is not None and trace.policy_versions else rollout.policy_versions
    return max(versions) if versions else rollout.policy_version_started
