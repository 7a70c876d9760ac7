"""Why: the only module that knows how the trainer stream (`/v1/trainer`, protocol/trainer-stream.ts)
spells its frames. Frames from the coordinator are untrusted input: each is checked field by field
and turned into a typed frame; frames to the coordinator are built here. When the result frame
changes (a typed SessionResult, a binary frame for token arrays) this module changes, not the client.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

from .errors import PolarClientError
from .trace_frame import result_frame_object
from .types import GROUP_STATUSES, REPLACEMENT_EXHAUSTED_REASONS, ROLLOUT_STATUSES, InlineTask, ReplaceFlat, Rollout, Sampling, TaskStat, TaskStats, Trace

TRAINER_PROTOCOL_VERSION = 1
#: What result frames a trainer may ask for: binary trace frames (token arrays packed) or JSON text.
ENCODINGS = ("binary", "json")


# ------------------------------------------------------------------------------------------------
# Frames from the coordinator
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Welcome:
    protocol_version: int
    trainer_id: str
    policy_version: int
    unacked: int
    #: Issued only at the trainer id's first hello: present it in every later hello.
    trainer_secret: Optional[str] = None


@dataclass(frozen=True)
class SubmittedFrame:
    request_id: str
    group_id: str
    rollout_ids: list[str]


@dataclass(frozen=True)
class ResultFrame:
    rollout: Rollout


@dataclass(frozen=True)
class GroupFrame:
    group_id: str
    status: str
    rollout_ids: list[str]
    rewards: list[Optional[float]]
    advantages: list[Optional[float]]
    #: Dynamic sampling (absent from coordinators older than it: the defaults).
    task_id: Optional[str] = None
    reward_std: Optional[float] = None
    flat: bool = False
    replacement_index: int = 0
    replaces: Optional[str] = None
    replaced_by: Optional[str] = None
    replacement_exhausted: Optional[str] = None


@dataclass(frozen=True)
class TaskStatsFrame:
    request_id: str
    stats: TaskStats


@dataclass(frozen=True)
class PausedFrame:
    request_id: str
    nodes: int


@dataclass(frozen=True)
class ResumedFrame:
    policy_version: int


@dataclass(frozen=True)
class ErrorFrame:
    code: str
    message: str
    request_id: Optional[str]


Frame = Union[Welcome, SubmittedFrame, ResultFrame, GroupFrame, TaskStatsFrame, PausedFrame, ResumedFrame, ErrorFrame]


def _bad(path: str, expected: str, value: Any) -> PolarClientError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return PolarClientError("protocol", f"{path}: expected {expected}, got {shown}")


def _field(obj: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        raise PolarClientError("protocol", f"{path}.{key}: missing")
    return obj[key]


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _bad(path, "a string", value)
    return value


def _opt_str(value: Any, path: str) -> Optional[str]:
    return None if value is None else _str(value, path)


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(path, "an integer", value)
    return value


def _num(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(path, "a finite number", value)
    return float(value)


def _opt_num(value: Any, path: str) -> Optional[float]:
    return None if value is None else _num(value, path)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(path, "a boolean", value)
    return value


def _obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, "an object", value)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(path, "an array", value)
    return value


def _ints(value: Any, path: str) -> list[int]:
    items = _list(value, path)
    for i, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, int):
            raise _bad(f"{path}[{i}]", "an integer", v)
    return items


def _bits(value: Any, path: str) -> list[int]:
    items = _ints(value, path)
    for i, v in enumerate(items):
        if v not in (0, 1):
            raise _bad(f"{path}[{i}]", "0 or 1", v)
    return items


def _nums(value: Any, path: str) -> list[float]:
    return [_num(v, f"{path}[{i}]") for i, v in enumerate(_list(value, path))]


def _strs(value: Any, path: str) -> list[str]:
    return [_str(v, f"{path}[{i}]") for i, v in enumerate(_list(value, path))]


def _opt_nums(value: Any, path: str) -> list[Optional[float]]:
    return [_opt_num(v, f"{path}[{i}]") for i, v in enumerate(_list(value, path))]


def _int_list_or_empty(value: Any) -> list[int]:
    """Metadata lists written by the node (calls, policy_versions); anything else reads as none."""
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


def parse_trace(raw: Any, path: str) -> Trace:
    obj = _obj(raw, path)
    response_ids = _ints(_field(obj, "response_ids", path), f"{path}.response_ids")
    loss_mask = _bits(_field(obj, "loss_mask", path), f"{path}.loss_mask")
    logprobs = _nums(_field(obj, "response_logprobs", path), f"{path}.response_logprobs")
    if len(loss_mask) != len(response_ids) or len(logprobs) != len(response_ids):
        raise PolarClientError("protocol", f"{path}: loss_mask and response_logprobs must have one entry per response token")
    metadata = _obj(obj.get("metadata", {}), f"{path}.metadata")
    training_filter = metadata.get("training_filter")
    masked = isinstance(training_filter, dict) and training_filter.get("masked") is True
    return Trace(
        prompt_ids=_ints(_field(obj, "prompt_ids", path), f"{path}.prompt_ids"),
        response_ids=response_ids,
        loss_mask=loss_mask,
        response_logprobs=logprobs,
        finish_reason=_opt_str(obj.get("finish_reason"), f"{path}.finish_reason"),
        reward=_opt_num(obj.get("reward"), f"{path}.reward"),
        calls=_int_list_or_empty(metadata.get("calls")),
        policy_versions=_int_list_or_empty(metadata.get("policy_versions")),
        masked=masked,
        metadata=metadata,
    )


def _failure_kind(status: str, metadata: Mapping[str, Any]) -> Optional[str]:
    failure = metadata.get("failure")
    if isinstance(failure, dict) and isinstance(failure.get("cause"), str):
        return failure["cause"]
    if status == "COMPLETED":
        return None
    if status == "CANCELLED":
        return "cancelled"
    # A result the coordinator made itself (e.g. no attempts left) names its cause only in `error`.
    return "unreported"


def parse_rollout(raw: Any, path: str = "result") -> Rollout:
    obj = _obj(raw, path)
    status = _str(_field(obj, "status", path), f"{path}.status")
    if status not in ROLLOUT_STATUSES:
        raise _bad(f"{path}.status", " | ".join(ROLLOUT_STATUSES), status)
    traces = [parse_trace(t, f"{path}.traces[{i}]") for i, t in enumerate(_list(_field(obj, "traces", path), f"{path}.traces"))]
    metadata = _obj(_field(obj, "metadata", path), f"{path}.metadata")
    timing_raw = _obj(_field(obj, "timing", path), f"{path}.timing")
    timing = {k: float(v) for k, v in timing_raw.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    masked = status != "COMPLETED" or not any(not t.masked for t in traces)
    return Rollout(
        result_id=_str(_field(obj, "result_id", path), f"{path}.result_id"),
        rollout_id=_str(_field(obj, "rollout_id", path), f"{path}.rollout_id"),
        group_id=_str(_field(obj, "group_id", path), f"{path}.group_id"),
        status=status,
        reward=_opt_num(_field(obj, "reward", path), f"{path}.reward"),
        masked=masked,
        failure_kind=_failure_kind(status, metadata),
        error=_opt_str(obj.get("error"), f"{path}.error"),
        stale=_bool(_field(obj, "stale", path), f"{path}.stale"),
        policy_version_started=_int(_field(obj, "policy_version_started", path), f"{path}.policy_version_started"),
        policy_versions=_ints(_field(obj, "policy_versions", path), f"{path}.policy_versions"),
        timing=timing,
        node_id=_opt_str(obj.get("node_id"), f"{path}.node_id"),
        traces=traces,
        metadata=metadata,
    )


def _task_stat(raw: Any, path: str) -> TaskStat:
    obj = _obj(raw, path)
    return TaskStat(
        task_id=_str(_field(obj, "task_id", path), f"{path}.task_id"),
        pass_rate=_num(_field(obj, "pass_rate", path), f"{path}.pass_rate"),
        mean_reward=_num(_field(obj, "mean_reward", path), f"{path}.mean_reward"),
        weight=_num(_field(obj, "weight", path), f"{path}.weight"),
        groups=_int(_field(obj, "groups", path), f"{path}.groups"),
        rollouts=_int(_field(obj, "rollouts", path), f"{path}.rollouts"),
        flat_groups=_int(_field(obj, "flat_groups", path), f"{path}.flat_groups"),
        distance=_opt_num(_field(obj, "distance", path), f"{path}.distance"),
        updated_at=_str(_field(obj, "updated_at", path), f"{path}.updated_at"),
    )


def _group_frame(obj: Mapping[str, Any], kind: str) -> GroupFrame:
    status = _str(_field(obj, "status", kind), f"{kind}.status")
    if status not in GROUP_STATUSES:
        raise _bad(f"{kind}.status", " | ".join(GROUP_STATUSES), status)
    exhausted = _opt_str(obj.get("replacement_exhausted"), f"{kind}.replacement_exhausted")
    if exhausted is not None and exhausted not in REPLACEMENT_EXHAUSTED_REASONS:
        raise _bad(f"{kind}.replacement_exhausted", " | ".join(REPLACEMENT_EXHAUSTED_REASONS), exhausted)
    frame = GroupFrame(
        group_id=_str(_field(obj, "group_id", kind), f"{kind}.group_id"),
        status=status,
        rollout_ids=_strs(_field(obj, "rollout_ids", kind), f"{kind}.rollout_ids"),
        rewards=_opt_nums(_field(obj, "rewards", kind), f"{kind}.rewards"),
        advantages=_opt_nums(_field(obj, "advantages", kind), f"{kind}.advantages"),
        task_id=_opt_str(obj.get("task_id"), f"{kind}.task_id"),
        reward_std=_opt_num(obj.get("reward_std"), f"{kind}.reward_std"),
        flat=_bool(obj.get("flat", False), f"{kind}.flat"),
        replacement_index=_int(obj.get("replacement_index", 0), f"{kind}.replacement_index"),
        replaces=_opt_str(obj.get("replaces"), f"{kind}.replaces"),
        replaced_by=_opt_str(obj.get("replaced_by"), f"{kind}.replaced_by"),
        replacement_exhausted=exhausted,
    )
    if not (len(frame.rewards) == len(frame.advantages) == len(frame.rollout_ids)):
        raise PolarClientError("protocol", "group: rollout_ids, rewards and advantages must have the same length")
    return frame


def parse_frame(data: Union[str, bytes]) -> Frame:
    """One frame from the coordinator (a JSON text frame, or a binary trace frame carrying a result);
    raises PolarClientError("protocol") for anything else."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        obj: Any = result_frame_object(data)
    else:
        try:
            obj = json.loads(data)
        except ValueError as err:
            raise PolarClientError("protocol", f"frame is not JSON: {err}") from None
    obj = _obj(obj, "frame")
    kind = _str(_field(obj, "type", "frame"), "frame.type")
    if kind == "welcome":
        return Welcome(
            protocol_version=_int(_field(obj, "protocol_version", kind), f"{kind}.protocol_version"),
            trainer_id=_str(_field(obj, "trainer_id", kind), f"{kind}.trainer_id"),
            policy_version=_int(_field(obj, "policy_version", kind), f"{kind}.policy_version"),
            unacked=_int(_field(obj, "unacked", kind), f"{kind}.unacked"),
            trainer_secret=_opt_str(obj.get("trainer_secret"), f"{kind}.trainer_secret"),
        )
    if kind == "submitted":
        return SubmittedFrame(
            request_id=_str(_field(obj, "request_id", kind), f"{kind}.request_id"),
            group_id=_str(_field(obj, "group_id", kind), f"{kind}.group_id"),
            rollout_ids=_strs(_field(obj, "rollout_ids", kind), f"{kind}.rollout_ids"),
        )
    if kind == "result":
        return ResultFrame(parse_rollout(_field(obj, "result", kind)))
    if kind == "group":
        return _group_frame(obj, kind)
    if kind == "task_stats":
        target = _opt_num(_field(obj, "target_pass_rate", kind), f"{kind}.target_pass_rate")
        return TaskStatsFrame(
            request_id=_str(_field(obj, "request_id", kind), f"{kind}.request_id"),
            stats=TaskStats(
                target_pass_rate=target,
                half_life_groups=_num(_field(obj, "half_life_groups", kind), f"{kind}.half_life_groups"),
                tasks=[_task_stat(t, f"{kind}.tasks[{i}]") for i, t in enumerate(_list(_field(obj, "tasks", kind), f"{kind}.tasks"))],
                unmeasured=_strs(_field(obj, "unmeasured", kind), f"{kind}.unmeasured"),
            ),
        )
    if kind == "paused":
        return PausedFrame(_str(_field(obj, "request_id", kind), f"{kind}.request_id"), _int(_field(obj, "nodes", kind), f"{kind}.nodes"))
    if kind == "resumed":
        return ResumedFrame(_int(_field(obj, "policy_version", kind), f"{kind}.policy_version"))
    if kind == "error":
        request_id = obj.get("request_id")
        return ErrorFrame(
            code=_str(_field(obj, "code", kind), f"{kind}.code"),
            message=_str(_field(obj, "message", kind), f"{kind}.message"),
            request_id=None if request_id is None else _str(request_id, f"{kind}.request_id"),
        )
    raise PolarClientError("protocol", f"unknown frame type {kind!r}")


# ------------------------------------------------------------------------------------------------
# Frames to the coordinator
# ------------------------------------------------------------------------------------------------


def _encode(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"), allow_nan=False)


def hello(trainer_id: str, trainer_secret: Optional[str] = None, encoding: str = "binary") -> str:
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
    frame: dict[str, Any] = {"type": "hello", "protocol_version": TRAINER_PROTOCOL_VERSION, "trainer_id": trainer_id, "encoding": encoding}
    if trainer_secret:
        frame["trainer_secret"] = trainer_secret
    return _encode(frame)


def credit(n: int) -> str:
    return _encode({"type": "credit", "n": n})


def ack(result_ids: list[str]) -> str:
    return _encode({"type": "ack", "result_ids": result_ids})


def cancel_group(group_id: str) -> str:
    return _encode({"type": "cancel_group", "group_id": group_id})


def policy(version: int) -> str:
    return _encode({"type": "policy", "version": version})


def pause(request_id: str) -> str:
    return _encode({"type": "pause", "request_id": request_id})


def resume(version: int) -> str:
    return _encode({"type": "resume", "version": version})


def task_stats(request_id: str, *, task_ids: Optional[list[str]] = None, target_pass_rate: Optional[float] = None, limit: int = 100) -> str:
    frame: dict[str, Any] = {"type": "task_stats", "request_id": request_id, "limit": limit}
    if task_ids is not None:
        frame["task_ids"] = list(task_ids)
    if target_pass_rate is not None:
        frame["target_pass_rate"] = target_pass_rate
    return _encode(frame)


def _task(task: Union[str, InlineTask, Mapping[str, Any]]) -> Union[str, dict[str, Any]]:
    if isinstance(task, str):
        return task
    if isinstance(task, InlineTask):
        out: dict[str, Any] = {"task_id": task.task_id, "instruction": task.instruction}
        if task.runtime is not None:
            out["runtime"] = task.runtime
        if task.evaluator is not None:
            out["evaluator"] = task.evaluator
        if task.timeout_seconds is not None:
            out["timeout_seconds"] = task.timeout_seconds
        if task.metadata:
            out["metadata"] = dict(task.metadata)
        return out
    if isinstance(task, Mapping):
        return dict(task)
    raise TypeError(f"task must be a task id, an InlineTask or a mapping, got {type(task).__name__}")


def submit(
    request_id: str,
    *,
    task: Union[str, InlineTask, Mapping[str, Any]],
    n: int,
    harness: str,
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
) -> str:
    agent_settings = dict(settings or {})
    if sampling is not None:
        for key in ("max_output_tokens", "temperature", "top_p"):
            value = getattr(sampling, key)
            if value is not None:
                agent_settings[key] = value
    agent: dict[str, Any] = {"harness": harness, "settings": agent_settings, "env": dict(env or {})}
    if model_name is not None:
        agent["model_name"] = model_name
    group: dict[str, Any] = {"task": _task(task), "n": n, "agent": agent, "priority": priority, "metadata": dict(metadata or {}), "advantages": advantages}
    if builder is not None:
        group["builder"] = dict(builder)
    if early_stop_min_usable is not None:
        group["early_stop_min_usable"] = early_stop_min_usable
    if min_reward_std is not None:
        group["min_reward_std"] = min_reward_std
    if replace_flat is not None:
        spec: dict[str, Any] = {"max_replacements": replace_flat.max_replacements, "source": replace_flat.source}
        if replace_flat.tasks:
            spec["tasks"] = [_task(t) for t in replace_flat.tasks]
        group["replace_flat"] = spec
    return _encode({"type": "submit", "request_id": request_id, "group": group})
