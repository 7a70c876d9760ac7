"""A GRPO trainer that closes the loop through Polar on a CPU.

It starts a small cluster (the mock engine with its trainable policy, a coordinator, two nodes on
the process runtime), then repeats: take finished groups of rollouts of the bundled tasks from the
Python client, compute GRPO advantages from their rewards, update the policy's logits from the
recorded token logprobs (clipped importance ratio against the rollout logprobs), pause the
gateways, push the new weights to the engine as a new policy version, resume. Groups keep being
sampled while the trainer trains (one batch ahead), so some are a version behind; a group whose
oldest call is more than --max-staleness versions old is dropped. Writes curve.csv and curve.svg.

    python3 examples/learn/train.py            # or: bun run learn
    python3 examples/learn/train.py --short    # the version the tests run
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python"))
sys.path.insert(0, str(HERE))

from choice_policy import ChoicePolicy  # noqa: E402
from grpo import Adam, group_staleness, grpo_update, logprob_mismatches, training_row  # noqa: E402
from plot import reward_curve_svg  # noqa: E402
from polar_client import Group, TrainerClient  # noqa: E402
from stack import Stack  # noqa: E402


@dataclass
class StepRecord:
    step: int
    #: Policy version of the weights the step produced.
    policy_version: int
    groups: int
    rollouts: int
    masked_rollouts: int
    mean_reward: float
    #: Mean over the tasks of the policy's π(solve), before and after the step's update.
    solve_probability_before: float
    solve_probability_after: float
    #: Groups whose rewards were all equal (zero advantage everywhere).
    flat_groups: int
    #: Groups dropped since the previous step for being more than max_staleness versions old.
    stale_groups_dropped: int
    #: Largest (trainer version − oldest call version) among the step's groups.
    max_staleness_trained: int
    clipped_fraction: float
    mean_ratio: float
    #: Trained tokens whose recorded logprob is not the policy's own under its sampling version.
    logprob_mismatches: int
    seconds: float


def mean_solve_probability(policy: ChoicePolicy) -> float:
    return sum(policy.probabilities(t)[0] for t in policy.tasks) / len(policy.tasks)


def train(args: argparse.Namespace, stack: Stack, out: Path) -> list[StepRecord]:
    policy = ChoicePolicy.from_engine(stack.policy())
    version = 0
    history = {version: policy.copy()}
    optimiser = Adam(lr=args.lr)
    rng = random.Random(args.seed)
    order: list[str] = []
    in_flight: dict[str, str] = {}  # group id → task id
    records: list[StepRecord] = []
    started = time.monotonic()

    with TrainerClient(stack.coordinator_url, stack.trainer_token, "learn-grpo") as client:

        def submit_one() -> None:
            if not order:
                order.extend(rng.sample(policy.tasks, len(policy.tasks)))
            task = order.pop()
            in_flight[client.submit(task, n=args.n, harness="mini", timeout=60).group_id] = task

        for _ in range(args.groups_per_step * (1 + args.lookahead)):
            submit_one()
        dropped = 0
        for step in range(1, args.steps + 1):
            batch: list[tuple[str, Group]] = []
            while len(batch) < args.groups_per_step:
                group = client.next_group(timeout=args.group_timeout)
                task = in_flight.pop(group.group_id)
                submit_one()
                if group_staleness(group, version) > args.max_staleness:
                    dropped += 1
                    continue
                batch.append((task, group))
            before = mean_solve_probability(policy)
            rows, rewards, masked, flat, mismatches = [], [], 0, 0, 0
            for task, group in batch:
                advantages = group.advantages()  # GRPO with the sample std (TRL / verl)
                usable = [r for r in group.rollouts if r.usable]
                masked += len(group.rollouts) - len(usable)
                flat += int(len({r.reward for r in usable}) <= 1)
                for rollout, advantage in zip(group.rollouts, advantages):
                    if advantage is None or not rollout.usable:
                        continue
                    rewards.append(rollout.reward)
                    mismatch = logprob_mismatches(history, task, rollout)
                    if mismatch is None:
                        raise RuntimeError(f"rollout {rollout.rollout_id} was sampled at a version no longer kept")
                    mismatches += mismatch
                    rows.append(training_row(policy, task, rollout, advantage))
            stats = grpo_update(policy, rows, optimiser, clip=args.clip, epochs=args.epochs)

            # Weight sync: no LLM call runs while the engine's weights change, and every call after
            # the resume is recorded with the new version.
            client.pause(timeout=300)
            version += 1
            stack.update_policy(policy.weights(version))
            client.resume(version, timeout=60)
            history[version] = policy.copy()
            for old in [v for v in history if v < version - args.max_staleness - 1]:
                del history[old]

            record = StepRecord(
                step=step,
                policy_version=version,
                groups=len(batch),
                rollouts=sum(len(g.rollouts) for _, g in batch),
                masked_rollouts=masked,
                mean_reward=sum(rewards) / len(rewards) if rewards else float("nan"),
                solve_probability_before=before,
                solve_probability_after=mean_solve_probability(policy),
                flat_groups=flat,
                stale_groups_dropped=dropped,
                max_staleness_trained=max(group_staleness(g, version - 1) for _, g in batch),
                clipped_fraction=stats.clipped_fraction,
                mean_ratio=stats.mean_ratio,
                logprob_mismatches=mismatches,
                seconds=time.monotonic() - started,
            )
            dropped = 0
            records.append(record)
            write_outputs(out, records, args)
            print(
                f"step {step:2d}  v{version}  reward {record.mean_reward:.3f}  π(solve) {before:.3f} → {record.solve_probability_after:.3f}  "
                f"flat {flat}/{len(batch)}  staleness ≤ {record.max_staleness_trained}  clipped {record.clipped_fraction:.2f}  "
                f"mismatches {mismatches}  {record.seconds:.0f} s",
                flush=True,
            )
    # The groups still in flight end with the cluster, which this run owns.
    return records


def write_outputs(out: Path, records: list[StepRecord], args: argparse.Namespace) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "curve.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(records[0])))
        writer.writeheader()
        for record in records:
            writer.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in asdict(record).items()})
    title = f"GRPO through Polar: {args.groups_per_step} groups × {args.n} rollouts per step, bundled tasks, seed {args.seed}"
    svg = reward_curve_svg([r.step for r in records], [r.mean_reward for r in records], [r.solve_probability_before for r in records], title)
    (out / "curve.svg").write_text(svg)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="training steps (one weight update each)")
    parser.add_argument("--groups-per-step", type=int, default=8, help="groups trained on per step")
    parser.add_argument("--n", type=int, default=4, help="rollouts per group")
    parser.add_argument("--lookahead", type=int, default=1, help="extra batches kept in flight while training (off-policy by up to this many versions)")
    parser.add_argument("--max-staleness", type=int, default=1, help="drop a group whose oldest call is more versions behind than this")
    parser.add_argument("--lr", type=float, default=0.3, help="Adam learning rate on the logits")
    parser.add_argument("--epochs", type=int, default=2, help="passes over each batch (the second one is off-policy: the ratio clip matters)")
    parser.add_argument("--clip", type=float, default=0.2, help="PPO/GRPO ratio clip ε")
    parser.add_argument("--initial-solve-probability", type=float, default=0.2, help="π(solve) of every task before training")
    parser.add_argument("--seed", type=int, default=1, help="engine seed and task order")
    parser.add_argument("--workers-per-node", type=int, default=4, help="init/run/postrun workers of each of the two nodes")
    parser.add_argument("--group-timeout", type=float, default=600, help="seconds to wait for a finished group")
    parser.add_argument("--out", type=Path, default=HERE, help="where curve.csv and curve.svg go")
    parser.add_argument("--bun", default="bun", help="the bun executable that runs the Polar processes")
    parser.add_argument("--short", action="store_true", help="the short run of the tests: 5 steps of 4 groups, lr 0.8")
    args = parser.parse_args(argv)
    if args.short:
        args.steps, args.groups_per_step, args.lr = 5, 4, 0.8
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="polar-learn-"))
    stack = Stack(workdir, seed=args.seed, initial_solve_probability=args.initial_solve_probability, max_staleness=args.max_staleness, workers_per_node=args.workers_per_node, bun=args.bun)
    print(f"starting the cluster (logs in {workdir})", flush=True)
    with stack:
        print(f"engine {stack.engine_url}, coordinator {stack.coordinator_url}, 2 nodes", flush=True)
        records = train(args, stack, args.out)
    first, last = records[0], records[-1]
    summary = {
        "steps": len(records),
        "first_step_mean_reward": first.mean_reward,
        "last_step_mean_reward": last.mean_reward,
        "solve_probability": [first.solve_probability_before, last.solve_probability_after],
        "seconds": last.seconds,
        "logprob_mismatches": sum(r.logprob_mismatches for r in records),
    }
    print(json.dumps(summary), flush=True)
    print(f"wrote {args.out / 'curve.csv'} and {args.out / 'curve.svg'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
