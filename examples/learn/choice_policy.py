"""Why: the trainer's copy of the mock engine's trainable policy (node/mock-engine/trainable-policy.ts).

The policy is a categorical distribution over two behaviours per task — "solve" (read the code, apply
the fix) and "mis-solve" (skim it, apply a plausible wrong fix) — with logits
``bias + task_logits[task]``. The engine samples the behaviour once per session and writes it as the
first word of the session's first reply ("Carefully" or "Quickly"); the first token of that word is
the only token whose probability is not 1, so its logprob is log π(behaviour | task) and every other
sampled token has logprob 0. Given the same weights, this module computes exactly the logprobs the
engine recorded, which is what lets the trainer form importance ratios and gradients from the
recorded token logprobs alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

CHOICES = ("solve", "mis-solve")


def log_softmax(logits: Sequence[float]) -> list[float]:
    top = max(logits)
    total = math.log(sum(math.exp(x - top) for x in logits)) + top
    return [x - total for x in logits]


@dataclass(frozen=True)
class Decision:
    """Where a rollout's behaviour was sampled: trace index, token index, and which choice."""

    trace: int
    token: int
    choice: int


@dataclass
class ChoicePolicy:
    tasks: list[str]
    #: Token id that opens each choice's word, in CHOICES order.
    choice_token_ids: list[int]
    bias: list[float]
    task_logits: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def from_engine(cls, payload: Mapping[str, Any]) -> "ChoicePolicy":
        """From the engine's GET /polar/policy answer (architecture and current weights)."""
        names = [c["name"] for c in payload["choices"]]
        if tuple(names) != CHOICES:
            raise ValueError(f"engine offers choices {names}, this trainer knows {list(CHOICES)}")
        weights = payload["weights"]
        tasks = list(payload["tasks"])
        return cls(
            tasks=tasks,
            choice_token_ids=[int(c["token_id"]) for c in payload["choices"]],
            bias=[float(x) for x in weights["bias"]],
            task_logits={t: [float(x) for x in weights["task_logits"].get(t, [0.0, 0.0])] for t in tasks},
        )

    def copy(self) -> "ChoicePolicy":
        return ChoicePolicy(list(self.tasks), list(self.choice_token_ids), list(self.bias), {t: list(v) for t, v in self.task_logits.items()})

    def weights(self, version: int) -> dict[str, Any]:
        """The body of the engine's POST /polar/policy."""
        return {"version": version, "bias": list(self.bias), "task_logits": {t: list(v) for t, v in self.task_logits.items()}}

    def logits(self, task: str) -> list[float]:
        own = self.task_logits.get(task, [0.0, 0.0])
        return [b + w for b, w in zip(self.bias, own)]

    def probabilities(self, task: str) -> list[float]:
        return [math.exp(lp) for lp in log_softmax(self.logits(task))]

    def logprob(self, task: str, choice: int) -> float:
        return log_softmax(self.logits(task))[choice]

    def decision(self, traces: Sequence[Any]) -> Decision | None:
        """The first trained token that opens a choice word, with traces taken in call order."""
        order = sorted(range(len(traces)), key=lambda i: min(traces[i].calls) if traces[i].calls else math.inf)
        for i in order:
            trace = traces[i]
            for t, (token, mask) in enumerate(zip(trace.response_ids, trace.loss_mask)):
                if mask == 1 and token in self.choice_token_ids:
                    return Decision(i, t, self.choice_token_ids.index(token))
        return None

    # Flat parameter vector for the optimiser: bias, then each task's two logits in `tasks` order.
    def vector(self) -> list[float]:
        out = list(self.bias)
        for t in self.tasks:
            out.extend(self.task_logits[t])
        return out

    def set_vector(self, values: Sequence[float]) -> None:
        self.bias = list(values[0:2])
        for i, t in enumerate(self.tasks):
            self.task_logits[t] = list(values[2 + 2 * i : 4 + 2 * i])

    def grad_logprob(self, task: str, choice: int) -> dict[int, float]:
        """d log π(choice | task) / d parameters, as {vector index: value} (sparse)."""
        probs = self.probabilities(task)
        g = [(1.0 if k == choice else 0.0) - probs[k] for k in range(len(CHOICES))]
        out = {0: g[0], 1: g[1]}
        if task in self.task_logits:
            base = 2 + 2 * self.tasks.index(task)
            out[base] = g[0]
            out[base + 1] = g[1]
        return out
