"""Why: TRL's AsyncGRPOTrainer consumes `RolloutSample`s from a rollout worker's queue
(trl/experimental/async_grpo/async_rollout_worker.py, huggingface/trl@f2cd577):

    prompt, completion, input_ids, completion_mask, old_log_probs, advantage, model_version,
    group_id, metrics

`input_ids` is the whole sequence (prompt included); `completion_mask` and `old_log_probs` run
over the same positions (0 / 0.0 on the prompt and on context tokens). `group_id` is an int;
`model_version` is the policy version the tokens were sampled with (the trainer drops samples
more than `max_staleness` versions old). `prompt`/`completion` are chat messages TRL keeps for
logging only; Polar streams tokens, so they are empty. `metrics` carries the reward and
`traces_in_rollout`.

The worker side is TRL's `RolloutWorkerProtocol` (trl/experimental/async_grpo/async_grpo_trainer.py):
a `rollout_buffer` queue plus start / stop / update_model_version / check_health.
`PolarRolloutWorker` implements it over a Polar trainer client.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Optional

from ..advantages import DEFAULT_ADVANTAGE_METHOD
from ..types import Group
from .common import oldest_version, stable_group_index, trained_rollouts


def to_trl_samples(group: Group, method: str = DEFAULT_ADVANTAGE_METHOD, group_index: Optional[int] = None) -> list[dict[str, Any]]:
    """TRL RolloutSample fields, one row per trained trace (pass them as `RolloutSample(**row)`)."""
    index = stable_group_index(group.group_id) if group_index is None else group_index
    rows = []
    for item in trained_rollouts(group, method):
        for trace in item.traces:
            prompt_len = len(trace.prompt_ids)
            rows.append(
                {
                    "prompt": [],
                    "completion": [],
                    "input_ids": list(trace.prompt_ids) + list(trace.response_ids),
                    "completion_mask": [0] * prompt_len + list(trace.loss_mask),
                    "old_log_probs": [0.0] * prompt_len + list(trace.response_logprobs),
                    "advantage": float(item.advantage),
                    "model_version": oldest_version(item.rollout, trace),
                    "group_id": index,
                    "metrics": {"reward": float(item.reward), "traces_in_rollout": float(len(item.traces))},
                }
            )
    return rows


class PolarRolloutWorker:
    """TRL's RolloutWorkerProtocol over a Polar TrainerClient (the synchronous one).

    `submit_next` is called whenever fewer than `groups_in_flight` groups are running; it submits
    one group through the client (e.g. `lambda c: c.submit(task, n=8)`). Finished groups become
    RolloutSample rows in `rollout_buffer`. `make_sample`, if given, turns a row into the
    framework's own RolloutSample (e.g. `lambda row: RolloutSample(**row)`).
    """

    def __init__(self, client: Any, submit_next: Callable[[Any], Any], *, groups_in_flight: int = 4, method: str = DEFAULT_ADVANTAGE_METHOD, make_sample: Optional[Callable[[dict[str, Any]], Any]] = None, queue_maxsize: int = 0):
        self.rollout_buffer: "queue.Queue[Any]" = queue.Queue(maxsize=queue_maxsize)
        self.model_version = 0
        self._client = client
        self._submit_next = submit_next
        self._groups_in_flight = groups_in_flight
        self._method = method
        self._make_sample = make_sample or (lambda row: row)
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None
        self._last_group_at = time.monotonic()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="polar-rollout-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def update_model_version(self, model_version: int) -> None:
        self.model_version = model_version
        self._client.set_policy_version(model_version)

    def check_health(self, stale_after_s: float) -> None:
        if self._error is not None:
            raise RuntimeError(f"Polar rollout worker failed: {self._error}") from self._error
        if self._thread is None or not self._thread.is_alive():
            raise RuntimeError("Polar rollout worker is not running")
        idle = time.monotonic() - self._last_group_at
        if idle > stale_after_s:
            raise RuntimeError(f"Polar rollout worker produced no group for {idle:.0f} s")

    def _loop(self) -> None:
        running = 0
        try:
            while not self._stop.is_set():
                while running < self._groups_in_flight:
                    self._submit_next(self._client)
                    running += 1
                try:
                    group = self._client.next_group(timeout=1.0)
                except Exception as err:
                    if getattr(err, "code", None) == "timeout":
                        continue
                    raise
                running -= 1
                self._last_group_at = time.monotonic()
                for row in to_trl_samples(group, self._method):
                    self.rollout_buffer.put(self._make_sample(row))
        except BaseException as err:  # surfaced by check_health
            self._error = err

