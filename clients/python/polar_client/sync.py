"""Why: most trainer loops are synchronous. This client runs the asyncio client on its own event
loop in a background thread, so the stream keeps flowing (credits, acknowledgements, reconnects)
while the caller trains, and exposes the same operations as blocking calls.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, Iterator, Mapping, Optional, TypeVar, Union

from .aio import AsyncTrainerClient, Counts
from .types import Group, InlineTask, Sampling, Submitted, TaskStats

T = TypeVar("T")


class TrainerClient:
    """Blocking trainer client; see AsyncTrainerClient for the semantics of each call.

    >>> with TrainerClient("http://127.0.0.1:8500", token, "trainer-0") as client:
    ...     client.submit("py-lru-get-refresh", n=8)
    ...     for group in client.groups():
    ...         train(group)
    """

    def __init__(self, url: str, token: str, trainer_id: str, *, connect_timeout: Optional[float] = 30.0, **options: Any):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"polar-trainer-{trainer_id}", daemon=True)
        self._thread.start()

        async def make() -> AsyncTrainerClient:
            return AsyncTrainerClient(url, token, trainer_id, **options)

        self._client = self._call(make())
        try:
            self._call(self._client.connect(connect_timeout))
        except BaseException:
            self.close()
            raise

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def __enter__(self) -> "TrainerClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def counts(self) -> Counts:
        return self._client.counts

    @property
    def policy_version(self) -> Optional[int]:
        return self._client.policy_version

    @property
    def errors(self) -> list[Any]:
        return list(self._client.errors)

    @property
    def connected(self) -> bool:
        return self._client.connected

    @property
    def remembered_ids(self) -> int:
        return self._client.remembered_ids

    def submit(self, task: Union[str, InlineTask, Mapping[str, Any]], n: int, harness: str = "mini", *, sampling: Optional[Sampling] = None, timeout: Optional[float] = None, **options: Any) -> Submitted:
        return self._call(self._client.submit(task, n, harness, sampling=sampling, timeout=timeout, **options))

    def next_group(self, timeout: Optional[float] = None) -> Group:
        return self._call(self._client.next_group(timeout))

    def groups(self, timeout: Optional[float] = None) -> Iterator[Group]:
        while True:
            yield self.next_group(timeout)

    def ack(self, group: Group) -> None:
        self._call(self._client.ack(group))

    def task_stats(self, task_ids: Optional[list[str]] = None, target_pass_rate: Optional[float] = None, limit: int = 100, timeout: Optional[float] = None) -> TaskStats:
        return self._call(self._client.task_stats(task_ids, target_pass_rate, limit, timeout))

    def pause(self, timeout: Optional[float] = None) -> int:
        return self._call(self._client.pause(timeout))

    def resume(self, policy_version: int, timeout: Optional[float] = None) -> int:
        return self._call(self._client.resume(policy_version, timeout))

    def set_policy_version(self, version: int) -> None:
        self._call(self._client.set_policy_version(version))

    def cancel_group(self, group_id: str) -> None:
        self._call(self._client.cancel_group(group_id))

    def drop_connection(self) -> None:
        async def drop() -> None:
            self._client.drop_connection()

        self._call(drop())

    def close(self) -> None:
        if not self._loop.is_running():
            return
        client = getattr(self, "_client", None)
        if client is not None:
            self._call(client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._loop.is_running():
            self._loop.close()
