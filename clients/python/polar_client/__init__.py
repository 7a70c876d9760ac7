"""Polar's Python trainer client: submit groups of rollouts to a Polar coordinator and receive
finished groups — rollouts and their token-faithful traces — each exactly once.

    from polar_client import TrainerClient
    with TrainerClient("http://127.0.0.1:8500", token, "my-trainer") as client:
        client.submit("py-lru-get-refresh", n=8, harness="mini")
        group = client.next_group()
        advantages = group.advantages()          # GRPO, sample std (TRL / verl default)
"""

from .advantages import ADVANTAGE_METHODS, DEFAULT_ADVANTAGE_METHOD, group_advantages
from .aio import AsyncTrainerClient, Counts
from .errors import ERROR_CODES, PolarClientError
from .sync import TrainerClient
from .types import Group, InlineTask, ReplaceFlat, Rollout, Sampling, Submitted, TaskStat, TaskStats, Trace
from .wire import TRAINER_PROTOCOL_VERSION

__all__ = [
    "ADVANTAGE_METHODS",
    "DEFAULT_ADVANTAGE_METHOD",
    "ERROR_CODES",
    "TRAINER_PROTOCOL_VERSION",
    "AsyncTrainerClient",
    "Counts",
    "Group",
    "InlineTask",
    "PolarClientError",
    "ReplaceFlat",
    "Rollout",
    "Sampling",
    "Submitted",
    "TaskStat",
    "TaskStats",
    "Trace",
    "TrainerClient",
    "group_advantages",
]
