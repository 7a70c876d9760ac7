"""Frames as the coordinator sends them (protocol/trainer-stream.ts), built for the unit tests."""

import json


def trace(prompt=(1, 2, 3), response=(10, 11, 12, 13), mask=(1, 1, 0, 1), logprobs=(-0.5, -0.25, 0.0, -1.0), calls=(0,), versions=(0,), reward=1.0, finish="stop", masked=False):
    metadata = {"strategy": "per-call", "calls": list(calls), "policy_versions": list(versions), "stats": {"trainable_tokens": sum(mask)}}
    if masked:
        metadata["training_filter"] = {"masked": True, "reason": "session_error"}
    return {"prompt_ids": list(prompt), "response_ids": list(response), "loss_mask": list(mask), "response_logprobs": list(logprobs), "finish_reason": finish, "reward": reward, "metadata": metadata}


def result(rollout_id, group_id="grp_1", status="COMPLETED", reward=1.0, traces=None, metadata=None, error=None, started=0, versions=(0,), stale=False):
    return {
        "result_id": rollout_id,
        "group_id": group_id,
        "rollout_id": rollout_id,
        "status": status,
        "reward": reward,
        "traces": [trace(reward=reward)] if traces is None else traces,
        "policy_version_started": started,
        "policy_versions": list(versions),
        "stale": stale,
        "timing": {"e2e_ms": 1234.5, "run_ms": 1000.0},
        "node_id": "node-a",
        "error": error,
        "metadata": {"sample_index": 0, "harness": "mini"} if metadata is None else metadata,
    }


def result_frame(*args, **kwargs):
    return json.dumps({"type": "result", "result": result(*args, **kwargs)})


def group_frame(group_id, rollout_ids, rewards, advantages=None, status="completed", **sampling):
    """A group frame; `sampling` adds the dynamic-sampling fields (task_id, reward_std, flat, replaces, …)."""
    return json.dumps({"type": "group", "group_id": group_id, "status": status, "rollout_ids": list(rollout_ids), "rewards": list(rewards), "advantages": list(advantages or [0.0] * len(rewards)), **sampling})


def task_stats_frame(request_id, tasks, target=None, unmeasured=()):
    return json.dumps({"type": "task_stats", "request_id": request_id, "target_pass_rate": target, "half_life_groups": 4, "tasks": list(tasks), "unmeasured": list(unmeasured)})


def task_stat(task_id, pass_rate, distance=None, groups=1):
    return {"task_id": task_id, "pass_rate": pass_rate, "mean_reward": pass_rate, "weight": 2.0 * groups, "groups": groups, "rollouts": 2 * groups, "flat_groups": 0, "distance": distance, "updated_at": "2026-01-01T00:00:00.000Z"}
