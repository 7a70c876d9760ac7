"""Why: the asyncio trainer client — one WebSocket to the coordinator's `/v1/trainer`, kept open by
reconnecting with resume (the coordinator sends again what was not acknowledged), with credits and
acknowledgements handled for the caller and each rollout handed out once, inside its finished group.

Flow control: a result's credit goes back as soon as it is held, except while finished groups wait
for the caller — then at most `window` of their results are held before the stream stops. Results
of groups that have not finished yet always get their credit back (they are work the trainer asked
for; holding back would deadlock a window smaller than the groups in flight).

Acknowledgement: with `auto_ack` (the default) a group is acknowledged when the caller asks for the
next one (it has been processed), or when the client closes; `ack(group)` does it by hand. An
unacknowledged group is sent again after a reconnect and dropped here as a repeat.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Mapping, Optional, Union

from . import wire
from .assembler import GroupAssembler
from .dedup import SeenResults
from .errors import PolarClientError
from .transport import connect_websocket, handshake_status
from .types import COORDINATOR_ADVANTAGE_MODES, REPLACE_FLAT_SOURCES, Group, InlineTask, ReplaceFlat, Sampling, Submitted, TaskStats

log = logging.getLogger("polar_client")

ACK_BATCH = 100_000  # the coordinator's limit of ids per ack frame
MAX_N = 4096


@dataclass
class Counts:
    #: Results received for the first time, repeats dropped, groups handed out, reconnects made.
    results: int = 0
    duplicates: int = 0
    groups: int = 0
    reconnects: int = 0


def _check_dynamic_sampling(min_reward_std: Optional[float], replace_flat: Optional[ReplaceFlat]) -> None:
    if min_reward_std is not None and (isinstance(min_reward_std, bool) or not isinstance(min_reward_std, (int, float)) or not 0 <= min_reward_std < float("inf")):
        raise ValueError(f"min_reward_std must be a finite number >= 0, got {min_reward_std!r}")
    if replace_flat is None:
        return
    if not isinstance(replace_flat, ReplaceFlat):
        raise TypeError(f"replace_flat must be a ReplaceFlat, got {type(replace_flat).__name__}")
    m = replace_flat.max_replacements
    if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 64:
        raise ValueError(f"replace_flat.max_replacements must be an integer from 1 to 64, got {m!r}")
    if replace_flat.source not in REPLACE_FLAT_SOURCES:
        raise ValueError(f"replace_flat.source must be one of {', '.join(REPLACE_FLAT_SOURCES)}, got {replace_flat.source!r}")
    if (replace_flat.source == "next_task") != bool(replace_flat.tasks):
        raise ValueError("replace_flat.tasks is required with source next_task, and only with it")
    if len(replace_flat.tasks) > 64:
        raise ValueError("replace_flat.tasks holds at most 64 tasks")


def _check_submit(n: int, harness: str, priority: int, early_stop_min_usable: Optional[int], advantages: str) -> None:
    """The coordinator's GroupSpec bounds, checked before sending (a frame it cannot parse is answered
    without the request id, so the caller would never hear back)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise ValueError(f"n must be an integer from 1 to {MAX_N}, got {n!r}")
    if not isinstance(harness, str) or harness == "":
        raise ValueError("harness must be a non-empty string")
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 100:
        raise ValueError(f"priority must be an integer from 0 to 100, got {priority!r}")
    if early_stop_min_usable is not None and (isinstance(early_stop_min_usable, bool) or not isinstance(early_stop_min_usable, int) or not 1 <= early_stop_min_usable <= n):
        raise ValueError(f"early_stop_min_usable must be an integer from 1 to n ({n}), got {early_stop_min_usable!r}")
    if advantages not in COORDINATOR_ADVANTAGE_MODES:
        raise ValueError(f"advantages must be one of {', '.join(COORDINATOR_ADVANTAGE_MODES)}, got {advantages!r}")


class AsyncTrainerClient:
    def __init__(
        self,
        url: str,
        token: str,
        trainer_id: str,
        *,
        window: int = 64,
        auto_ack: bool = True,
        acked_ids_kept: int = 100_000,
        reconnect_delay: float = 0.2,
        max_reconnect_delay: float = 5.0,
        max_frame_bytes: int = 256 * 1024 * 1024,
        trainer_secret: Optional[str] = None,
        on_secret: Optional[Callable[[str], None]] = None,
        encoding: str = "binary",
    ):
        if not 1 <= len(trainer_id) <= 128:
            raise ValueError("trainer_id must be 1 to 128 characters")
        if window < 1:
            raise ValueError("window must be at least 1")
        if encoding not in wire.ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(wire.ENCODINGS)}, got {encoding!r}")
        #: Result frames asked for in the hello: "binary" trace frames (default) or "json"; both are read.
        self.encoding = encoding
        base = url.rstrip("/")
        if base.startswith("http"):
            base = "ws" + base[len("http") :]
        self.url = f"{base}/v1/trainer"
        self.trainer_id = trainer_id
        #: The secret proving this trainer id (given from an earlier run, or issued at the first hello;
        #: kept across reconnects). Keep it, e.g. with `on_secret`, to restart as the same trainer.
        self.trainer_secret = trainer_secret
        self._on_secret = on_secret
        self.window = window
        self.auto_ack = auto_ack
        self._token = token
        self._reconnect_delay = reconnect_delay
        self._max_reconnect_delay = max_reconnect_delay
        self._max_frame_bytes = max_frame_bytes
        self._seen = SeenResults(acked_ids_kept)
        self._assembler = GroupAssembler(acked_ids_kept)
        self._ready: deque[Group] = deque()
        self._ready_changed = asyncio.Event()
        self._handed: list[Group] = []
        self._pending: dict[str, asyncio.Future[Any]] = {}
        #: Task ids of submits not yet answered, by request id (recorded when `submitted` arrives).
        self._submitting: dict[str, str] = {}
        #: Resumes waiting for `resumed`, oldest first, with the version each asked for.
        self._resumes: deque[tuple[int, asyncio.Future[int]]] = deque()
        self._next_request = 0
        self._ws: Any = None
        self._connected = asyncio.Event()
        #: Set once the client is closed or stopped for good (self._fatal says why).
        self._stopped = asyncio.Event()
        self._credit_outstanding = 0
        self._run_task: Optional[asyncio.Task[None]] = None
        self._closed = False
        self._fatal: Optional[PolarClientError] = None
        self.counts = Counts()
        #: The coordinator's policy version, from the last welcome or resumed frame.
        self.policy_version: Optional[int] = None
        #: Errors the coordinator sent that answer no request (e.g. cancel_group of an unknown group).
        self.errors: deque[PolarClientError] = deque(maxlen=100)

    # -------------------------------------------------------------------------------- lifecycle

    async def connect(self, timeout: Optional[float] = 30.0) -> "AsyncTrainerClient":
        """Opens the stream and waits for the coordinator's welcome."""
        if self._run_task is None:
            self._run_task = asyncio.get_running_loop().create_task(self._run())
        await self._wait_connected(timeout)
        return self

    async def close(self) -> None:
        """Acknowledges the groups handed out (with auto_ack), then closes the stream."""
        if self._closed:
            return
        if self.auto_ack and self._ws is not None:
            for group in list(self._handed):
                await self.ack(group)
        self._closed = True
        self._fail_all(PolarClientError("closed", "the client was closed"))
        self._stopped.set()
        self._ready_changed.set()
        ws = self._ws
        if ws is not None:
            await ws.close()
        if self._run_task is not None:
            self._run_task.cancel()
            try:
                await self._run_task
            except (asyncio.CancelledError, Exception):
                pass

    async def __aenter__(self) -> "AsyncTrainerClient":
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def remembered_ids(self) -> int:
        """Result ids held to drop repeats (bounded by acked_ids_kept plus the unacknowledged)."""
        return self._seen.remembered

    @property
    def waiting_results(self) -> int:
        """Results held for groups that have not finished yet."""
        return self._assembler.waiting_results

    def drop_connection(self) -> None:
        """Drops the connection as a network blip would; the client reconnects by itself."""
        if self._ws is not None:
            asyncio.get_running_loop().create_task(self._ws.close())

    # --------------------------------------------------------------------------------- requests

    async def submit(
        self,
        task: Union[str, InlineTask, Mapping[str, Any]],
        n: int,
        harness: str = "mini",
        *,
        model_name: Optional[str] = None,
        settings: Optional[Mapping[str, Any]] = None,
        env: Optional[Mapping[str, str]] = None,
        sampling: Optional[Sampling] = None,
        builder: Optional[Mapping[str, Any]] = None,
        priority: int = 0,
        metadata: Optional[Mapping[str, Any]] = None,
        early_stop_min_usable: Optional[int] = None,
        advantages: str = "mean",
        min_reward_std: Optional[float] = None,
        replace_flat: Optional[ReplaceFlat] = None,
        timeout: Optional[float] = None,
    ) -> Submitted:
        """Submits a group of `n` rollouts of one task (an id from the coordinator's task file, or inline).

        Dynamic sampling: a completed group whose reward std is at or below `min_reward_std` (0
        when not given: all rewards equal) arrives with `flat=True`; with `replace_flat` the
        coordinator also starts a fresh group in its place (`replaced_by`), within its bound.
        """
        _check_submit(n, harness, priority, early_stop_min_usable, advantages)
        _check_dynamic_sampling(min_reward_std, replace_flat)
        request_id = self._request_id()
        frame = wire.submit(
            request_id, task=task, n=n, harness=harness, model_name=model_name, settings=settings, env=env, sampling=sampling,
            builder=builder, priority=priority, metadata=metadata, early_stop_min_usable=early_stop_min_usable, advantages=advantages,
            min_reward_std=min_reward_std, replace_flat=replace_flat,
        )
        self._submitting[request_id] = task if isinstance(task, str) else task.task_id if isinstance(task, InlineTask) else str(task.get("task_id"))
        try:
            answer: wire.SubmittedFrame = await self._request(request_id, frame, timeout)
        finally:
            self._submitting.pop(request_id, None)
        return Submitted(answer.group_id, list(answer.rollout_ids))

    async def task_stats(
        self,
        task_ids: Optional[list[str]] = None,
        target_pass_rate: Optional[float] = None,
        limit: int = 100,
        timeout: Optional[float] = None,
    ) -> TaskStats:
        """The coordinator's per-task pass rates, nearest `target_pass_rate` first when given
        (e.g. 0.5: the tasks whose groups are likeliest to have reward spread)."""
        if task_ids is not None and (not task_ids or not all(isinstance(t, str) and t for t in task_ids)):
            raise ValueError("task_ids must be a non-empty list of task ids")
        if target_pass_rate is not None and not 0 <= target_pass_rate <= 1:
            raise ValueError(f"target_pass_rate must be from 0 to 1, got {target_pass_rate!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise ValueError(f"limit must be an integer from 1 to 10000, got {limit!r}")
        request_id = self._request_id()
        answer: wire.TaskStatsFrame = await self._request(request_id, wire.task_stats(request_id, task_ids=task_ids, target_pass_rate=target_pass_rate, limit=limit), timeout)
        return answer.stats

    async def pause(self, timeout: Optional[float] = None) -> int:
        """Holds new LLM calls on every node; returns once all have drained (the number of nodes)."""
        request_id = self._request_id()
        answer: wire.PausedFrame = await self._request(request_id, wire.pause(request_id), timeout)
        return answer.nodes

    async def resume(self, policy_version: int, timeout: Optional[float] = None) -> int:
        """Releases the nodes with a new policy version (never lower than the current one)."""
        await self._wait_connected(timeout)
        entry = (policy_version, asyncio.get_running_loop().create_future())
        self._resumes.append(entry)
        try:
            await self._send(wire.resume(policy_version), required=True)
            return await self._await(entry[1], timeout)
        finally:
            if entry in self._resumes:
                self._resumes.remove(entry)

    async def set_policy_version(self, version: int) -> None:
        """Tells the coordinator the trainer's policy version (staleness is measured against it)."""
        await self._wait_connected(None)
        await self._send(wire.policy(version))

    async def cancel_group(self, group_id: str) -> None:
        """Cancels a running group; it still finishes (status "cancelled") with a result per member."""
        await self._wait_connected(None)
        await self._send(wire.cancel_group(group_id))

    # ------------------------------------------------------------------------------- the stream

    async def next_group(self, timeout: Optional[float] = None) -> Group:
        """The next finished group (acknowledging the previous one with auto_ack)."""
        if self.auto_ack:
            for group in list(self._handed):
                await self.ack(group)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while not self._ready:
            self._raise_if_stopped()
            self._ready_changed.clear()
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                raise PolarClientError("timeout", f"no finished group within {timeout} s")
            try:
                await asyncio.wait_for(self._ready_changed.wait(), remaining)
            except asyncio.TimeoutError:
                raise PolarClientError("timeout", f"no finished group within {timeout} s") from None
        group = self._ready.popleft()
        self._handed.append(group)
        self.counts.groups += 1
        await self._top_up()
        return group

    async def groups(self, timeout: Optional[float] = None) -> AsyncIterator[Group]:
        """Finished groups as they come (each waited for at most `timeout` seconds)."""
        while True:
            yield await self.next_group(timeout)

    async def ack(self, group: Group) -> None:
        """Acknowledges every result of `group`: the coordinator will not send them again."""
        ids = group.result_ids
        self._seen.acked(ids)
        if group in self._handed:
            self._handed.remove(group)
        for i in range(0, len(ids), ACK_BATCH):
            await self._send(wire.ack(ids[i : i + ACK_BATCH]))

    # -------------------------------------------------------------------------------- internals

    def _request_id(self) -> str:
        self._next_request += 1
        return f"py-{self._next_request}"

    def _raise_if_stopped(self) -> None:
        if self._fatal is not None:
            raise self._fatal
        if self._closed:
            raise PolarClientError("closed", "the client was closed")

    async def _wait_connected(self, timeout: Optional[float]) -> None:
        self._raise_if_stopped()
        if self._run_task is None:
            raise PolarClientError("closed", "connect() was not called")
        if not self._connected.is_set():
            waiters = {asyncio.ensure_future(self._connected.wait()), asyncio.ensure_future(self._stopped.wait())}
            try:
                await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
        self._raise_if_stopped()
        if not self._connected.is_set():
            raise PolarClientError("timeout", f"not connected to {self.url} within {timeout} s")

    async def _request(self, request_id: str, frame: str, timeout: Optional[float]) -> Any:
        await self._wait_connected(timeout)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(frame, required=True)
            return await self._await(future, timeout)
        finally:
            self._pending.pop(request_id, None)

    @staticmethod
    async def _await(future: "asyncio.Future[Any]", timeout: Optional[float]) -> Any:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise PolarClientError("timeout", f"no answer within {timeout} s") from None

    async def _send(self, frame: str, required: bool = False) -> None:
        """Sends on the current connection. Credits and acks lost with a connection are renewed on
        the next one (`required=False`); a request that cannot go out raises."""
        ws = self._ws
        try:
            if ws is None:
                raise ConnectionError("not connected")
            await ws.send(frame)
        except Exception as err:
            if required:
                raise PolarClientError("connection_lost", f"the request could not be sent: {err}") from None
            log.debug("send failed: %s", err)

    def _fail_all(self, error: PolarClientError) -> None:
        for future in list(self._pending.values()) + [f for _, f in self._resumes]:
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        self._resumes.clear()

    def _stop(self, error: PolarClientError) -> None:
        log.error("trainer stream stopped: %s", error)
        self._fatal = error
        self._fail_all(error)
        self._stopped.set()
        self._ready_changed.set()

    async def _run(self) -> None:
        delay = self._reconnect_delay
        first = True
        outage = False  # warn once per outage, not once per attempt
        while not self._closed and self._fatal is None:
            if not first:
                self.counts.reconnects += 1
            first = False
            try:
                async with connect_websocket(self.url, {"authorization": f"Bearer {self._token}"}, self._max_frame_bytes) as ws:
                    self._ws = ws
                    await ws.send(wire.hello(self.trainer_id, self.trainer_secret, self.encoding))
                    async for raw in ws:
                        await self._on_frame(raw)
                        if self._connected.is_set():
                            delay = self._reconnect_delay
                            if outage:
                                log.info("trainer stream to %s reconnected", self.url)
                                outage = False
                    self._check_close(ws)
                    if not outage and not self._closed:
                        log.warning("the coordinator closed the trainer stream (code %s); reconnecting", getattr(ws, "close_code", None))
                        outage = True
            except asyncio.CancelledError:
                raise
            except PolarClientError as err:
                self._stop(err)
            except Exception as err:
                status = handshake_status(err)
                if status in (401, 403):
                    self._stop(PolarClientError("unauthorized", f"the coordinator refused the trainer token (HTTP {status})"))
                elif not outage:
                    log.warning("trainer stream to %s lost (%s); reconnecting", self.url, err)
                    outage = True
                else:
                    log.debug("reconnecting to %s: %s", self.url, err)
            finally:
                self._ws = None
                self._connected.clear()
                self._credit_outstanding = 0
                self._fail_all(PolarClientError("connection_lost", "the connection dropped before the coordinator answered; the request may or may not have taken effect"))
                self._ready_changed.set()
            if self._closed or self._fatal is not None:
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._max_reconnect_delay)

    def _check_close(self, ws: Any) -> None:
        code = getattr(ws, "close_code", None)
        if code == 4003:
            raise PolarClientError("unauthorized", f"the coordinator refused trainer id {self.trainer_id!r}: its trainer_secret is missing or wrong")
        if code == 4009:
            log.warning("trainer id %r is connected elsewhere; retrying", self.trainer_id)
        if code == 1002:
            raise PolarClientError("protocol", "the coordinator closed the stream: protocol version mismatch")
        if code == 1008:
            raise PolarClientError("protocol", "the coordinator closed the stream: too many bad frames")

    async def _on_frame(self, raw: Union[str, bytes]) -> None:
        frame = wire.parse_frame(raw)
        if isinstance(frame, wire.ResultFrame):
            await self._on_result(frame)
        elif isinstance(frame, wire.GroupFrame):
            self._finished(self._assembler.add_group_frame(frame))
        elif isinstance(frame, wire.Welcome):
            if frame.protocol_version != wire.TRAINER_PROTOCOL_VERSION:
                raise PolarClientError("protocol", f"coordinator speaks trainer protocol {frame.protocol_version}, this client {wire.TRAINER_PROTOCOL_VERSION}")
            if frame.trainer_secret:
                self.trainer_secret = frame.trainer_secret
                if self._on_secret is not None:
                    self._on_secret(frame.trainer_secret)
            self.policy_version = frame.policy_version
            self._credit_outstanding = 0
            self._connected.set()
            self._ready_changed.set()
            await self._top_up()
        elif isinstance(frame, wire.SubmittedFrame):
            self._assembler.submitted(frame.group_id, self._submitting.get(frame.request_id), frame.rollout_ids)
            self._settle(frame.request_id, frame)
        elif isinstance(frame, (wire.PausedFrame, wire.TaskStatsFrame)):
            self._settle(frame.request_id, frame)
        elif isinstance(frame, wire.ResumedFrame):
            self.policy_version = frame.policy_version
            for entry in list(self._resumes):
                if entry[0] == frame.policy_version:
                    self._resumes.remove(entry)
                    if not entry[1].done():
                        entry[1].set_result(frame.policy_version)
                    break
        elif isinstance(frame, wire.ErrorFrame):
            self._on_error(frame)

    async def _on_result(self, frame: wire.ResultFrame) -> None:
        rollout = frame.rollout
        self._credit_outstanding = max(0, self._credit_outstanding - 1)
        if not self._seen.is_new(rollout.result_id):
            # A repeat: its acknowledgement was lost with a connection, or the caller still holds
            # it. Dropped; acknowledged again only if it was already.
            self.counts.duplicates += 1
            if self._seen.was_acked(rollout.result_id):
                await self._send(wire.ack([rollout.result_id]))
        elif self._assembler.already_delivered(rollout.group_id):
            # A repeat of a group handed out so long ago that its ids were forgotten.
            self.counts.duplicates += 1
            await self._send(wire.ack([rollout.result_id]))
        else:
            self._seen.received(rollout.result_id)
            self.counts.results += 1
            self._finished(self._assembler.add_rollout(rollout))
        await self._top_up()

    def _finished(self, group: Optional[Group]) -> None:
        if group is not None:
            self._ready.append(group)
            self._ready_changed.set()

    def _on_error(self, frame: wire.ErrorFrame) -> None:
        error = PolarClientError("rejected", frame.message, remote_code=frame.code)
        if frame.request_id is not None and frame.request_id in self._pending:
            future = self._pending.pop(frame.request_id)
            if not future.done():
                future.set_exception(error)
            return
        if frame.code == "conflict" and self._resumes:
            _, future = self._resumes.popleft()
            if not future.done():
                future.set_exception(error)
            return
        log.warning("coordinator error: %s: %s", frame.code, frame.message)
        self.errors.append(error)

    def _settle(self, request_id: str, value: Any) -> None:
        future = self._pending.get(request_id)
        if future is not None and not future.done():
            future.set_result(value)

    async def _top_up(self) -> None:
        if self._ws is None or not self._connected.is_set():
            return
        held = sum(len(g.rollouts) for g in self._ready)
        want = max(0, self.window - held)
        if self._credit_outstanding < want:
            grant = want - self._credit_outstanding
            self._credit_outstanding += grant
            await self._send(wire.credit(grant))
