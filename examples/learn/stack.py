"""Why: the learning example runs against a real Polar cluster on this machine — the mock engine
with its trainable policy, a coordinator, two nodes on the process runtime — started here as
`bun bin/polar.ts …` processes on free ports with fresh tokens, their output in log files, and
stopped (only these processes, by handle) however the run ends.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
POLAR = ROOT / "bin" / "polar.ts"
TASKS = ROOT / "tasks" / "tasks.jsonl"


def _first_line(path: Path, process: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if "\n" in text:
            return text.split("\n", 1)[0]
        if process.poll() is not None:
            raise RuntimeError(f"{path.stem} exited with {process.returncode} before it listened; see {path}")
        time.sleep(0.05)
    raise RuntimeError(f"{path.stem} did not start within {timeout} s; see {path}")


def _json(url: str, token: Optional[str] = None, body: Optional[dict[str, Any]] = None) -> Any:
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.load(res)


@dataclass
class Stack:
    workdir: Path
    seed: int
    initial_solve_probability: float
    max_staleness: int
    workers_per_node: int = 4
    bun: str = "bun"
    engine_url: str = ""
    coordinator_url: str = ""
    policy_token: str = field(default_factory=lambda: secrets.token_hex(16))
    trainer_token: str = field(default_factory=lambda: secrets.token_hex(16))
    node_token: str = field(default_factory=lambda: secrets.token_hex(16))
    admin_token: str = field(default_factory=lambda: secrets.token_hex(16))
    rollout_token: str = field(default_factory=lambda: secrets.token_hex(16))
    _children: list[subprocess.Popen] = field(default_factory=list)

    def _spawn(self, name: str, args: list[str], env: Optional[dict[str, str]] = None) -> tuple[subprocess.Popen, Path]:
        """Starts a Polar process; its stdout (where it says where it listens) and its stderr (its
        structured log) go to separate files, so the first stdout line is always the announcement."""
        log = self.workdir / f"{name}.log"
        out = open(log, "w")
        err = open(self.workdir / f"{name}.err.log", "w")
        child = subprocess.Popen([self.bun, str(POLAR), *args], stdout=out, stderr=err, env={**os.environ, **(env or {})}, cwd=ROOT)
        out.close()
        err.close()
        self._children.append(child)
        return child, log

    def start(self) -> "Stack":
        self.workdir.mkdir(parents=True, exist_ok=True)
        engine, log = self._spawn("engine", ["mock-engine", "--port", "0", "--tasks", str(TASKS), "--trainable", "--success-probability", str(self.initial_solve_probability), "--seed", str(self.seed), "--policy-token", self.policy_token])
        self.engine_url = _first_line(log, engine, 60).rsplit(" ", 1)[-1]
        coordinator, log = self._spawn(
            "coordinator",
            ["coordinator", "--port", "0", "--db", str(self.workdir / "coordinator.db"), "--tasks", str(TASKS), "--max-staleness", str(self.max_staleness),
             "--node-token", self.node_token, "--trainer-token", self.trainer_token, "--admin-token", self.admin_token, "--rollout-token", self.rollout_token],
        )
        self.coordinator_url = json.loads(_first_line(log, coordinator, 60))["url"]
        workers = str(self.workers_per_node)
        # Ids unique to this run: a node removes what an earlier life of its id left on the host.
        for node_id in (f"learn-{os.getpid()}-a", f"learn-{os.getpid()}-b"):
            self._spawn(
                node_id,
                ["node", "--node-id", node_id, "--port", "0", "--db", str(self.workdir / f"{node_id}.db"), "--runtime", "process", "--engine", self.engine_url,
                 "--coordinator", self.coordinator_url, "--admin-token", secrets.token_hex(16), "--run-workers", workers, "--init-workers", workers,
                 "--postrun-workers", workers, "--max-tokens-cap", "2048"],
                {"POLAR_NODE_TOKEN": self.node_token},
            )
        deadline = time.monotonic() + 120
        while self.connected_nodes() < 2:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the nodes did not join the coordinator within 120 s; see {self.workdir}/learn-*.log")
            for child in self._children:
                if child.poll() is not None:
                    raise RuntimeError(f"a Polar process exited with {child.returncode}; see the logs in {self.workdir}")
            time.sleep(0.2)
        return self

    def connected_nodes(self) -> int:
        try:
            nodes = _json(f"{self.coordinator_url}/v1/admin/nodes", self.admin_token)["nodes"]
        except OSError:
            return 0
        return sum(1 for n in nodes if n.get("status") == "connected")

    def policy(self) -> dict[str, Any]:
        return _json(f"{self.engine_url}/polar/policy")

    def update_policy(self, weights: dict[str, Any]) -> dict[str, Any]:
        return _json(f"{self.engine_url}/polar/policy", self.policy_token, weights)

    def stop(self) -> None:
        for child in self._children:
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + 10
        for child in self._children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self._children.clear()

    def __enter__(self) -> "Stack":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: Any) -> None:
        self.stop()
