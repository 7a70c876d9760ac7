"""Why: the stream is at-least-once (results not acknowledged before a reconnect are sent again), so
the client drops repeats by result id — remembering every id it has not acknowledged yet and the
most recent acknowledged ones, so memory stays bounded over a run of millions of rollouts.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable


class SeenResults:
    def __init__(self, acked_ids_kept: int = 100_000):
        if acked_ids_kept < 0:
            raise ValueError("acked_ids_kept must be >= 0")
        self._kept = acked_ids_kept
        self._unacked: set[str] = set()
        self._acked: "OrderedDict[str, None]" = OrderedDict()

    def is_new(self, result_id: str) -> bool:
        return result_id not in self._unacked and result_id not in self._acked

    def was_acked(self, result_id: str) -> bool:
        return result_id in self._acked

    def received(self, result_id: str) -> None:
        self._unacked.add(result_id)

    def acked(self, result_ids: Iterable[str]) -> None:
        """Moves received ids to the acknowledged window (oldest forgotten first)."""
        for result_id in result_ids:
            if result_id not in self._unacked:
                continue
            self._unacked.discard(result_id)
            self._acked[result_id] = None
            while len(self._acked) > self._kept:
                self._acked.popitem(last=False)

    @property
    def remembered(self) -> int:
        return len(self._unacked) + len(self._acked)


class RecentIds:
    """A bounded set: the last `kept` ids added (for group ids already handed out)."""

    def __init__(self, kept: int):
        self._kept = kept
        self._ids: "OrderedDict[str, None]" = OrderedDict()

    def add(self, item: str) -> None:
        self._ids[item] = None
        self._ids.move_to_end(item)
        while len(self._ids) > self._kept:
            self._ids.popitem(last=False)

    def __contains__(self, item: object) -> bool:
        return item in self._ids
