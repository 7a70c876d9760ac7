"""Why: trainers normalise within a group, so the client hands out finished groups, not loose
results. A group is finished when the coordinator's `group` frame has named its members and a
result for every member has arrived — in either order, since results wait for credits and the
group frame does not.
"""

from __future__ import annotations

from typing import Optional

from .dedup import RecentIds
from .types import Group, Rollout
from .wire import GroupFrame


class GroupAssembler:
    def __init__(self, delivered_kept: int = 100_000):
        self._rollouts: dict[str, dict[str, Rollout]] = {}
        self._frames: dict[str, GroupFrame] = {}
        self._tasks: dict[str, str] = {}
        #: Member order of the groups this client submitted (the group frame's order may differ).
        self._members: dict[str, list[str]] = {}
        self._delivered = RecentIds(delivered_kept)

    def submitted(self, group_id: str, task_id: Optional[str], rollout_ids: list[str]) -> None:
        if task_id is not None:
            self._tasks[group_id] = task_id
        self._members[group_id] = list(rollout_ids)

    def already_delivered(self, group_id: str) -> bool:
        return group_id in self._delivered

    def add_rollout(self, rollout: Rollout) -> Optional[Group]:
        self._rollouts.setdefault(rollout.group_id, {})[rollout.rollout_id] = rollout
        return self._complete(rollout.group_id)

    def add_group_frame(self, frame: GroupFrame) -> Optional[Group]:
        if frame.group_id in self._delivered:
            return None
        self._frames[frame.group_id] = frame
        return self._complete(frame.group_id)

    @property
    def waiting_results(self) -> int:
        """Results held for groups that have not finished yet."""
        return sum(len(r) for r in self._rollouts.values())

    def _complete(self, group_id: str) -> Optional[Group]:
        frame = self._frames.get(group_id)
        have = self._rollouts.get(group_id, {})
        if frame is None or any(rid not in have for rid in frame.rollout_ids):
            return None
        del self._frames[group_id]
        self._rollouts.pop(group_id, None)
        submitted_task = self._tasks.pop(group_id, None)
        self._delivered.add(group_id)
        members = self._members.pop(group_id, None)
        order = members if members is not None and sorted(members) == sorted(frame.rollout_ids) else frame.rollout_ids
        advantage = dict(zip(frame.rollout_ids, frame.advantages))
        return Group(
            group_id=group_id,
            status=frame.status,
            task_id=frame.task_id if frame.task_id is not None else submitted_task,
            rollouts=[have[rid] for rid in order],
            coordinator_advantages=[advantage[rid] for rid in order],
            reward_std=frame.reward_std,
            flat=frame.flat,
            replacement_index=frame.replacement_index,
            replaces=frame.replaces,
            replaced_by=frame.replaced_by,
            replacement_exhausted=frame.replacement_exhausted,
        )
