"""Why: the GRPO update of the learning example, as pure functions over rollouts: the clipped
importance-ratio surrogate on the recorded token logprobs, normalised per rollout (a rollout that
became several traces counts once), an Adam step on the policy's logits, and a check that the
recorded logprobs are the policy's own under the weights of the version each call was sampled with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from choice_policy import ChoicePolicy

#: Recorded and recomputed logprobs closer than this are the same number (JSON round trip).
LOGPROB_TOLERANCE = 1e-6


@dataclass(frozen=True)
class TrainingRow:
    """One rollout as the loss sees it."""

    task: str
    advantage: float
    #: The sampled choice and the logprob the engine recorded for it; None when no decision token
    #: was trained (e.g. the reply was cut before the choice word).
    choice: int | None
    old_logprob: float | None
    #: Trained tokens over all of the rollout's traces (the per-rollout normaliser).
    trainable_tokens: int


def training_row(policy: ChoicePolicy, task: str, rollout: Any, advantage: float) -> TrainingRow:
    tokens = sum(sum(t.loss_mask) for t in rollout.traces)
    decision = policy.decision(rollout.traces)
    if decision is None:
        return TrainingRow(task, advantage, None, None, tokens)
    old = rollout.traces[decision.trace].response_logprobs[decision.token]
    return TrainingRow(task, advantage, decision.choice, float(old), tokens)


def logprob_mismatches(history: Mapping[int, ChoicePolicy], task: str, rollout: Any) -> int | None:
    """Trained tokens whose recorded logprob differs from the policy's own under the weights of the
    version the call was sampled with; None when a call's version is no longer in `history`."""
    some_policy = next(iter(history.values()))
    decision = some_policy.decision(rollout.traces)
    mismatches = 0
    for i, trace in enumerate(rollout.traces):
        for t, (mask, recorded) in enumerate(zip(trace.loss_mask, trace.response_logprobs)):
            if mask != 1:
                continue
            expected = 0.0
            if decision is not None and (i, t) == (decision.trace, decision.token):
                version = trace.policy_versions[0] if trace.policy_versions else None
                if version not in history:
                    return None
                expected = history[version].logprob(task, decision.choice)
            if abs(expected - recorded) > LOGPROB_TOLERANCE:
                mismatches += 1
    return mismatches


def group_staleness(group: Any, version: int) -> int:
    """How many versions the trainer's `version` is ahead of the group's oldest call (or, for a
    group without calls, of the version its rollouts started at)."""
    versions = [v for r in group.rollouts for t in r.traces for v in t.policy_versions] or [r.policy_version_started for r in group.rollouts]
    return version - min(versions)


@dataclass
class Adam:
    """Adam ascent on a flat parameter vector (maximises the objective)."""

    lr: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    m: list[float] = field(default_factory=list)
    v: list[float] = field(default_factory=list)
    steps: int = 0

    def step(self, params: list[float], grad: Sequence[float]) -> list[float]:
        if not self.m:
            self.m = [0.0] * len(params)
            self.v = [0.0] * len(params)
        self.steps += 1
        out = []
        for i, (p, g) in enumerate(zip(params, grad)):
            self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1 - self.beta2) * g * g
            m_hat = self.m[i] / (1 - self.beta1**self.steps)
            v_hat = self.v[i] / (1 - self.beta2**self.steps)
            out.append(p + self.lr * m_hat / (math.sqrt(v_hat) + self.eps))
        return out


@dataclass(frozen=True)
class UpdateStats:
    rows: int
    rows_with_gradient: int
    clipped_fraction: float
    mean_ratio: float
    objective: float


def grpo_update(policy: ChoicePolicy, rows: Sequence[TrainingRow], optimiser: Adam, clip: float = 0.2, epochs: int = 2) -> UpdateStats:
    """`epochs` passes of the clipped surrogate over `rows`, one Adam step each.

    Per rollout: J_i = (1/T_i) Σ_t min(r_t A_i, clip(r_t, 1-ε, 1+ε) A_i), r_t = exp(logπ_θ(y_t) -
    logπ_old(y_t)); the batch objective is the mean of J_i over rollouts. Under this policy every
    trained token but the decision token has r_t = 1 and no gradient.
    """
    usable = [r for r in rows if r.trainable_tokens > 0]
    ratios: list[float] = []
    clipped = 0
    objective = 0.0
    for _ in range(epochs):
        grad = [0.0] * len(policy.vector())
        ratios, clipped, objective = [], 0, 0.0
        for row in usable:
            if row.choice is None or row.old_logprob is None:
                objective += row.advantage / len(usable)
                continue
            new = policy.logprob(row.task, row.choice)
            ratio = math.exp(new - row.old_logprob)
            ratios.append(ratio)
            bounded = min(max(ratio, 1 - clip), 1 + clip)
            token_objective = min(ratio * row.advantage, bounded * row.advantage)
            # The other T-1 tokens each contribute A (ratio 1) and no gradient.
            objective += (token_objective + (row.trainable_tokens - 1) * row.advantage) / row.trainable_tokens / len(usable)
            if ratio * row.advantage > bounded * row.advantage:
                clipped += 1
                continue
            scale = row.advantage * ratio / row.trainable_tokens / len(usable)
            for index, g in policy.grad_logprob(row.task, row.choice).items():
                grad[index] += scale * g
        policy.set_vector(optimiser.step(policy.vector(), grad))
    return UpdateStats(
        rows=len(rows),
        rows_with_gradient=len(ratios),
        clipped_fraction=clipped / len(ratios) if ratios else 0.0,
        mean_ratio=sum(ratios) / len(ratios) if ratios else 1.0,
        objective=objective,
    )
