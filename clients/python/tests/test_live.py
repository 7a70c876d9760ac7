# The shared conformance cases (clients/conformance/cases.json) with the Python client against a
# live coordinator and two nodes, started by test/trainer-clients.test.ts, which passes their
# addresses in the environment; plus the adapters over real groups and the asyncio API.
# Skipped (with the reason) when run without that environment.
import json
import os
import unittest
import urllib.request
from pathlib import Path

from polar_client import AsyncTrainerClient, InlineTask, PolarClientError, ReplaceFlat, TrainerClient
from polar_client.adapters import to_openrlhf_outputs, to_slime_samples, to_trl_samples, to_verl_outputs

CASES = Path(__file__).resolve().parents[2] / "conformance" / "cases.json"
ENV = ("POLAR_TEST_COORDINATOR_URL", "POLAR_TEST_TRAINER_TOKEN", "POLAR_TEST_CONTROL_URL", "POLAR_TEST_TASKS")
TAKE_TIMEOUT_S = 300


def live():
    missing = [k for k in ENV if not os.environ.get(k)]
    return None if missing else {k: os.environ[k] for k in ENV}


def instructions(path):
    out = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row.get("task_id") or row["instance_id"]] = row.get("instruction") or row["problem_statement"]
    return out


def health(url):
    with urllib.request.urlopen(f"{url}/health", timeout=10) as res:
        return json.load(res)


def restart_coordinator(control):
    request = urllib.request.Request(f"{control}/restart_coordinator", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=300) as res:
        assert res.status == 200


@unittest.skipUnless(live(), f"needs a live cluster ({', '.join(ENV)}): run through `bun test test/trainer-clients.test.ts`")
class ConformanceTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.env = live()
        cls.url = cls.env["POLAR_TEST_COORDINATOR_URL"]
        cls.instructions = instructions(cls.env["POLAR_TEST_TASKS"])
        cls.cases = {c["name"]: c for c in json.loads(CASES.read_text())["cases"]}

    def run_case(self, name):
        case = self.cases[name]
        client = TrainerClient(self.url, self.env["POLAR_TEST_TRAINER_TOKEN"], f"py-{name}", auto_ack=case["auto_ack"], reconnect_delay=0.1)
        try:
            self._steps(case, client)
        finally:
            client.close()

    def _steps(self, case, client):
        start = health(self.url)["policy_version"]
        named, taken = {}, {}
        for step in case["steps"]:
            op = step["op"]
            if op == "submit":
                task = step["task"] if isinstance(step["task"], str) else InlineTask(step["task"]["inline"], self.instructions[step["task"]["inline"]])
                sampling = {}
                if "min_reward_std" in step:
                    sampling["min_reward_std"] = step["min_reward_std"]
                if "replace_flat" in step:
                    spec = step["replace_flat"]
                    sampling["replace_flat"] = ReplaceFlat(spec["max_replacements"], spec.get("source", "same_task"), tuple(spec.get("tasks", ())))
                if "expect_error" in step:
                    with self.assertRaises(PolarClientError) as refused:
                        client.submit(task, n=step["n"], timeout=60, **sampling)
                    self.assertEqual((refused.exception.code, refused.exception.remote_code), ("rejected", step["expect_error"]))
                else:
                    named[step["as"]] = client.submit(task, n=step["n"], timeout=60, **sampling).group_id
            elif op == "take":
                wanted = {named[n]: n for n in step["groups"]}
                while not all(n in taken for n in step["groups"]):
                    group = client.next_group(timeout=TAKE_TIMEOUT_S)
                    self.assertIn(group.group_id, wanted, "a group this case did not submit arrived")
                    taken[wanted[group.group_id]] = group
            elif op == "cancel":
                client.cancel_group(named[step["group"]])
            elif op == "pause":
                self.assertEqual(client.pause(timeout=120), step["expect_nodes"])
            elif op == "resume":
                version = start + step["version_offset"]
                if "expect_error" in step:
                    with self.assertRaises(PolarClientError) as refused:
                        client.resume(version, timeout=30)
                    self.assertEqual(refused.exception.remote_code, step["expect_error"])
                else:
                    self.assertEqual(client.resume(version, timeout=30), version)
                    self.assertEqual(health(self.url)["policy_version"], version)
            elif op == "restart_coordinator":
                restart_coordinator(self.env["POLAR_TEST_CONTROL_URL"])
            elif op == "take_replacement":
                replacement = taken[step["of"]].replaced_by
                self.assertIsNotNone(replacement, f"group {step['of']} was not replaced")
                named[step["as"]] = replacement
                group = client.next_group(timeout=TAKE_TIMEOUT_S)
                self.assertEqual(group.group_id, replacement, "a group other than the replacement arrived")
                self.assertEqual(group.replaces, named[step["of"]])
                taken[step["as"]] = group
            elif op == "ack":
                for n in step["groups"]:
                    client.ack(taken[n])
            else:
                self.fail(f"unknown op {op}")
        self._expect(case["expect"], taken, client, start, named)

    def _expect(self, expect, taken, client, start, named):
        self.assertEqual(set(taken), set(expect["groups"]))
        for name, want in expect["groups"].items():
            group = taken[name]
            self.assertEqual(group.status, want["status"], name)
            self.assertEqual(len(group.rollouts), want["rollouts"], name)
            for r in group.rollouts:
                self.assertIn(r.status, want["statuses"], name)
            if "usable" in want:
                self.assertEqual(sum(r.usable for r in group.rollouts), want["usable"], name)
            for status, least in want.get("at_least", {}).items():
                self.assertGreaterEqual(sum(r.status == status for r in group.rollouts), least, name)
            for key in ("task_id", "flat", "replacement_index", "replacement_exhausted"):
                if key in want:
                    self.assertEqual(getattr(group, key), want[key], f"{name}.{key}")
            for key in ("replaces", "replaced_by"):
                if key in want:
                    self.assertEqual(getattr(group, key), None if want[key] is None else named[want[key]], f"{name}.{key}")
            if "policy_version_offset" in want:
                version = start + want["policy_version_offset"]
                for r in group.rollouts:
                    self.assertEqual(r.policy_version_started, version)
                    self.assertEqual({v for t in r.traces for v in t.policy_versions}, {version})
        rollouts = [r for g in taken.values() for r in g.rollouts]
        self.assertEqual(len({r.rollout_id for r in rollouts}), len(rollouts), "a rollout arrived twice")
        self.assertEqual(client.counts.results, len(rollouts))
        low, high = expect["duplicates"]["min"], expect["duplicates"]["max"]
        self.assertTrue(low <= client.counts.duplicates <= high, f"duplicates {client.counts.duplicates} outside [{low}, {high}]")
        usable = [r for r in rollouts if r.usable]
        if "rewards_in" in expect:
            for r in usable:
                self.assertIn(r.reward, expect["rewards_in"])
        if expect.get("traces_well_formed"):
            for r in usable:
                self.assertGreater(r.num_traces, 0)
                for t in r.traces:
                    self.assertEqual(len(t.loss_mask), len(t.response_ids))
                    self.assertEqual(len(t.response_logprobs), len(t.response_ids))
                    self.assertEqual(len(t.policy_versions), len(t.calls))
                    self.assertGreater(len(t.calls), 0)
                    self.assertGreater(t.trainable_tokens, 0)
        if expect.get("mean_advantages_match_coordinator"):
            for group in taken.values():
                for ours, theirs in zip(group.advantages("mean"), group.coordinator_advantages):
                    if ours is None:
                        self.assertIsNone(theirs)
                    else:
                        self.assertAlmostEqual(ours, theirs, places=9)
        if expect.get("reward_std_matches_rewards"):
            for name, group in taken.items():
                scored = [r.reward for r in group.rollouts if r.status != "CANCELLED" and r.reward is not None]
                if len(scored) < 2:
                    self.assertIsNone(group.reward_std, name)
                else:
                    mean = sum(scored) / len(scored)
                    self.assertAlmostEqual(group.reward_std, (sum((r - mean) ** 2 for r in scored) / len(scored)) ** 0.5, places=9, msg=name)
        if "cancelled_rollouts" in expect:
            want = expect["cancelled_rollouts"]
            for r in rollouts:
                if r.status == "CANCELLED":
                    self.assertEqual((r.masked, r.failure_kind, r.reward), (want["masked"], want["failure_kind"], want["reward"]))

    # One test per case, in the file's order (the pause case moves the policy version).
    def test_1_groups_arrive_whole_each_rollout_once(self):
        self.run_case("groups_arrive_whole_each_rollout_once")

    def test_2_coordinator_killed_mid_stream_resume_and_dedup(self):
        self.run_case("coordinator_killed_mid_stream_resume_and_dedup")

    def test_3_cancel_a_running_group(self):
        self.run_case("cancel_a_running_group")

    def test_4_pause_then_resume_with_a_new_policy_version(self):
        self.run_case("pause_then_resume_with_a_new_policy_version")

    def test_5_unknown_task_refused(self):
        self.run_case("unknown_task_refused")

    def test_6_flat_group_replaced_within_its_bound(self):
        self.run_case("flat_group_replaced_within_its_bound")

    def test_every_case_has_a_test(self):
        ran = {name[len("test_") + 2 :] for name in dir(self) if name.startswith("test_") and name[5].isdigit()}
        self.assertEqual(ran, set(self.cases))


@unittest.skipUnless(live(), f"needs a live cluster ({', '.join(ENV)}): run through `bun test test/trainer-clients.test.ts`")
class LiveAsyncAndAdaptersTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_wrong_token_is_refused_at_the_handshake(self):
        env = live()
        client = AsyncTrainerClient(env["POLAR_TEST_COORDINATOR_URL"], "not-the-trainer-token-0123", "py-wrong-token")
        with self.assertRaises(PolarClientError) as refused:
            await client.connect(timeout=30)
        self.assertEqual(refused.exception.code, "unauthorized")
        await client.close()

    async def test_asyncio_client_and_every_adapter_on_a_real_group(self):
        env = live()
        async with AsyncTrainerClient(env["POLAR_TEST_COORDINATOR_URL"], env["POLAR_TEST_TRAINER_TOKEN"], "py-async-adapters") as client:
            submitted = await client.submit("js-leap-year-century", n=2, timeout=60)
            group = await client.next_group(timeout=TAKE_TIMEOUT_S)
        self.assertEqual(group.group_id, submitted.group_id)
        self.assertEqual(group.task_id, "js-leap-year-century")
        self.assertEqual([r.rollout_id for r in group.rollouts], submitted.rollout_ids)
        trained = [t for r in group.rollouts if r.usable for t in r.traces if not t.masked and t.trainable_tokens > 0]
        self.assertGreater(len(trained), 0)
        for rows in (to_trl_samples(group), to_verl_outputs(group), to_openrlhf_outputs(group), to_slime_samples([group])):
            self.assertEqual(len(rows), len(trained))
        for row in to_trl_samples(group):
            self.assertEqual(len(row["input_ids"]), len(row["completion_mask"]))
            self.assertEqual(len(row["input_ids"]), len(row["old_log_probs"]))
            self.assertTrue(all(lp == 0.0 for lp, m in zip(row["old_log_probs"], row["completion_mask"]) if m == 0))
            self.assertTrue(any(lp < 0 for lp in row["old_log_probs"]))  # the engine's logprobs came through
        for row, trace in zip(to_openrlhf_outputs(group), trained):
            inside = {i for start, end in row["action_ranges"] for i in range(start, end)}
            self.assertEqual(len(inside), trace.trainable_tokens)
            self.assertEqual(len(row["observation_tokens"]), len(trace.prompt_ids) + len(trace.response_ids))

if __name__ == "__main__":
    unittest.main()
