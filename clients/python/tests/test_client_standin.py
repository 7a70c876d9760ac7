# The asyncio client against a stand-in coordinator that repeats results on purpose (the real one
# repeats only after a reconnect lost an acknowledgement, which no test can time): groups handed
# out once each, repeats dropped with their credit returned, acknowledgements on the next group,
# reconnect with the same trainer id, a refused token, requests answered and refused.
import asyncio
import unittest

from polar_client import AsyncTrainerClient, PolarClientError, ReplaceFlat
from fixtures import group_frame, result_frame, task_stat, task_stats_frame
from standin import StandIn


def credits(frames):
    return sum(f["n"] for f in frames if f["type"] == "credit")


def acked(frames):
    return [i for f in frames if f["type"] == "ack" for i in f["result_ids"]]


class StandInTest(unittest.IsolatedAsyncioTestCase):
    async def test_groups_once_repeats_dropped_credits_returned_acks_on_next(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: credits(fs) >= 4)
            # Group frame first, results after (results wait for credits, the group frame does not).
            await conn.send(group_frame("g1", ["a", "b"], [1.0, 0.0], [0.5, -0.5]))
            for frame in [result_frame("a", "g1"), result_frame("a", "g1"), result_frame("b", "g1", reward=0.0), result_frame("c", "g2")]:
                await conn.send(frame)
            await conn.send(group_frame("g2", ["c"], [1.0]))
            await conn.send(result_frame("a", "g1"))  # a repeat after the group was handed out
            await conn.until(lambda fs: "c" in acked(fs))

        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr", window=4)
            await client.connect()
            g1 = await client.next_group(timeout=10)
            self.assertEqual((g1.group_id, [r.rollout_id for r in g1.rollouts]), ("g1", ["a", "b"]))
            self.assertEqual(g1.coordinator_advantages, [0.5, -0.5])
            self.assertAlmostEqual(g1.advantages()[0], 0.5 / (0.7071067811865476 + 1e-6), places=9)
            g2 = await client.next_group(timeout=10)  # acknowledges g1
            self.assertEqual(g2.group_id, "g2")
            await client.close()  # acknowledges g2
            self.assertEqual(client.counts.results, 3)
            self.assertEqual(client.counts.duplicates, 2)
            self.assertEqual(client.counts.groups, 2)
        frames = coordinator.received
        self.assertEqual(sorted(set(acked(frames))), ["a", "b", "c"])
        # The window, then one credit back for every result frame (repeats included): 4 + 5.
        self.assertEqual(credits(frames), 4 + 5)

    async def test_reconnect_resends_the_unacknowledged_and_they_are_dropped(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: credits(fs) >= 1)
            if coordinator.connections == 1:
                await conn.send(result_frame("a", "g1"))
                await conn.send(group_frame("g1", ["a", "b"], [1.0, 1.0]))
                await conn.close()  # b never went out; a was never acknowledged
                return
            for frame in [result_frame("a", "g1"), group_frame("g1", ["a", "b"], [1.0, 1.0]), result_frame("b", "g1")]:
                await conn.send(frame)
            await conn.until(lambda fs: "b" in acked(fs))

        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr", reconnect_delay=0.05)
            await client.connect()
            group = await client.next_group(timeout=10)
            self.assertEqual([r.rollout_id for r in group.rollouts], ["a", "b"])
            self.assertEqual(group.advantages(), [0.0, 0.0])
            await client.close()
            self.assertEqual((client.counts.results, client.counts.duplicates, client.counts.reconnects), (2, 1, 1))
        hellos = coordinator.frames("hello")
        self.assertEqual([h["trainer_id"] for h in hellos], ["tr", "tr"])

    async def test_rollouts_follow_the_submitted_order_whatever_the_group_frame_says(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: any(f["type"] == "submit" for f in fs))
            submit = next(f for f in conn.received if f["type"] == "submit")
            await conn.send({"type": "submitted", "request_id": submit["request_id"], "group_id": "g", "rollout_ids": ["x", "y"]})
            await conn.send(group_frame("g", ["y", "x"], [1.0, 0.0], [0.5, -0.5]))
            await conn.send(result_frame("y", "g"))
            await conn.send(result_frame("x", "g", reward=0.0))
            await conn.until(lambda fs: False, timeout=30)

        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr")
            await client.connect()
            await client.submit("task-a", n=2, timeout=5)
            group = await client.next_group(timeout=5)
            self.assertEqual([r.rollout_id for r in group.rollouts], ["x", "y"])
            self.assertEqual(group.coordinator_advantages, [-0.5, 0.5])
            self.assertEqual(group.rewards, [0.0, 1.0])
            self.assertEqual(group.task_id, "task-a")
            await client.close()

    async def test_a_dropped_connection_is_reopened_with_the_same_trainer_id(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: False, timeout=30)

        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr", reconnect_delay=0.05)
            await client.connect()
            client.drop_connection()
            for _ in range(200):
                if coordinator.connections == 2 and client.connected and len(coordinator.frames("credit")) == 2:
                    break
                await asyncio.sleep(0.02)
            self.assertEqual((coordinator.connections, client.counts.reconnects, client.connected), (2, 1, True))
            # Credits are granted afresh on the new connection (the coordinator resets them).
            self.assertEqual([f["n"] for f in coordinator.frames("credit")], [64, 64])
            await client.close()

    async def test_finished_groups_the_caller_has_not_taken_hold_back_credits(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: credits(fs) >= 2)
            for i in range(2):
                # The group frame first: each result finishes its group as it arrives.
                await conn.send(group_frame(f"g{i}", [f"r{i}"], [1.0]))
                await conn.send(result_frame(f"r{i}", f"g{i}"))
            await asyncio.sleep(0.3)
            seen.append(credits(conn.received))
            await conn.until(lambda fs: credits(fs) >= 4)

        seen = []
        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr", window=2)
            await client.connect()
            await asyncio.sleep(0.5)
            self.assertEqual(seen, [2])  # two finished groups wait: no credit back
            await client.next_group(timeout=5)
            await client.next_group(timeout=5)
            await asyncio.sleep(0.2)
            await client.close()
        self.assertEqual(credits(coordinator.received), 4)

    async def test_requests_are_answered_or_refused(self):
        async def script(conn, hello):
            await conn.welcome(hello, policy_version=2)
            while True:
                await conn.until(lambda fs: fs[-1]["type"] in ("submit", "pause", "resume", "cancel_group"))
                frame = conn.received[-1]
                conn.received.append({"type": "handled"})
                if frame["type"] == "submit" and frame["group"]["task"] == "missing":
                    await conn.send({"type": "error", "code": "not_found", "message": "no task", "request_id": frame["request_id"]})
                elif frame["type"] == "submit":
                    await conn.send({"type": "submitted", "request_id": frame["request_id"], "group_id": "g9", "rollout_ids": ["x", "y"]})
                elif frame["type"] == "pause":
                    await conn.send({"type": "paused", "request_id": frame["request_id"], "nodes": 2})
                elif frame["type"] == "resume" and frame["version"] < 2:
                    await conn.send({"type": "error", "code": "conflict", "message": "versions only move forward"})
                elif frame["type"] == "resume":
                    await conn.send({"type": "resumed", "policy_version": frame["version"]})
                else:
                    await conn.send({"type": "error", "code": "not_found", "message": "no running group"})

        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr")
            await client.connect()
            self.assertEqual(client.policy_version, 2)
            submitted = await client.submit("task-a", n=2, timeout=5)
            self.assertEqual((submitted.group_id, submitted.rollout_ids), ("g9", ["x", "y"]))
            with self.assertRaises(PolarClientError) as refused:
                await client.submit("missing", n=1, timeout=5)
            self.assertEqual((refused.exception.code, refused.exception.remote_code), ("rejected", "not_found"))
            self.assertEqual(await client.pause(timeout=5), 2)
            self.assertEqual(await client.resume(3, timeout=5), 3)
            self.assertEqual(client.policy_version, 3)
            with self.assertRaises(PolarClientError) as conflict:
                await client.resume(1, timeout=5)
            self.assertEqual(conflict.exception.remote_code, "conflict")
            await client.cancel_group("nope")
            for _ in range(100):
                if client.errors:
                    break
                await asyncio.sleep(0.02)
            self.assertEqual([e.remote_code for e in client.errors], ["not_found"])
            with self.assertRaises(ValueError):
                await client.submit("task-a", n=0)
            with self.assertRaises(ValueError):
                await client.submit("task-a", n=2, early_stop_min_usable=3)
            await client.close()
            with self.assertRaises(PolarClientError) as closed:
                await client.next_group(timeout=1)
            self.assertEqual(closed.exception.code, "closed")

    async def test_a_flat_group_then_its_replacement_each_handed_out_with_the_links(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: any(f["type"] == "submit" for f in fs))
            submit = next(f for f in conn.received if f["type"] == "submit")
            sent.append(submit["group"])
            await conn.send({"type": "submitted", "request_id": submit["request_id"], "group_id": "g1", "rollout_ids": ["a", "b"]})
            await conn.until(lambda fs: credits(fs) >= 4)
            for frame in [result_frame("a", "g1"), result_frame("b", "g1")]:
                await conn.send(frame)
            await conn.send(group_frame("g1", ["a", "b"], [1.0, 1.0], task_id="task-a", reward_std=0, flat=True, replacement_index=0, replaces=None, replaced_by="g2", replacement_exhausted=None))
            # The replacement runs another task (next_task); this client never submitted it.
            await conn.send(group_frame("g2", ["c", "d"], [1.0, 0.0], [0.5, -0.5], task_id="task-b", reward_std=0.5, flat=False, replacement_index=1, replaces="g1", replaced_by=None, replacement_exhausted=None))
            for frame in [result_frame("c", "g2"), result_frame("d", "g2", reward=0.0)]:
                await conn.send(frame)
            await conn.until(lambda fs: "d" in acked(fs))

        sent = []
        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr")
            await client.connect()
            await client.submit("task-a", n=2, min_reward_std=0.0, replace_flat=ReplaceFlat(1, "next_task", ("task-b",)), timeout=5)
            flat = await client.next_group(timeout=10)
            self.assertEqual((flat.group_id, flat.task_id, flat.flat, flat.reward_std, flat.replaced_by), ("g1", "task-a", True, 0.0, "g2"))
            self.assertEqual(flat.advantages(), [0.0, 0.0])
            replacement = await client.next_group(timeout=10)
            self.assertEqual((replacement.group_id, replacement.task_id, replacement.flat, replacement.replaces, replacement.replacement_index), ("g2", "task-b", False, "g1", 1))
            self.assertEqual([r.rollout_id for r in replacement.rollouts], ["c", "d"])
            await client.close()
        self.assertEqual(sent[0]["replace_flat"], {"max_replacements": 1, "source": "next_task", "tasks": ["task-b"]})
        self.assertEqual(sent[0]["min_reward_std"], 0.0)

    async def test_task_stats_are_asked_and_answered(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            await conn.until(lambda fs: any(f["type"] == "task_stats" for f in fs))
            asked = next(f for f in conn.received if f["type"] == "task_stats")
            queries.append(asked)
            await conn.send(task_stats_frame(asked["request_id"], [task_stat("b", 0.5, 0.0)], target=asked["target_pass_rate"], unmeasured=["c"]))
            await conn.until(lambda fs: False, timeout=30)

        queries = []
        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr")
            await client.connect()
            stats = await client.task_stats(task_ids=["b", "c"], target_pass_rate=0.5, timeout=5)
            self.assertEqual(([t.task_id for t in stats.tasks], stats.tasks[0].distance, stats.unmeasured), (["b"], 0.0, ["c"]))
            for bad in [dict(target_pass_rate=1.5), dict(limit=0), dict(task_ids=[])]:
                with self.assertRaises(ValueError):
                    await client.task_stats(**bad)
            for bad in [dict(min_reward_std=-1), dict(replace_flat=ReplaceFlat(0)), dict(replace_flat=ReplaceFlat(1, "next_task")), dict(replace_flat=ReplaceFlat(1, "same_task", ("x",))), dict(replace_flat=ReplaceFlat(1, "other"))]:
                with self.assertRaises(ValueError, msg=repr(bad)):
                    await client.submit("t", n=2, **bad)
            await client.close()
        self.assertEqual(queries[0], {"type": "task_stats", "request_id": queries[0]["request_id"], "limit": 100, "task_ids": ["b", "c"], "target_pass_rate": 0.5})

    async def test_a_refused_token_stops_the_client(self):
        async def script(conn, hello):
            await conn.welcome(hello)

        async with StandIn(script, token="right") as coordinator:
            client = AsyncTrainerClient(coordinator.url, "wrong", "tr", reconnect_delay=0.05)
            with self.assertRaises(PolarClientError) as caught:
                await client.connect(timeout=10)
            self.assertEqual(caught.exception.code, "unauthorized")
            await asyncio.sleep(0.3)
            self.assertEqual(coordinator.refused, 1)  # no retry loop against a refused token
            await client.close()

    async def test_memory_of_acknowledged_ids_is_bounded(self):
        async def script(conn, hello):
            await conn.welcome(hello)
            for i in range(6):
                await conn.until(lambda fs: credits(fs) >= i + 1)
                await conn.send(result_frame(f"r{i}", f"g{i}"))
                await conn.send(group_frame(f"g{i}", [f"r{i}"], [1.0]))
            await conn.until(lambda fs: "r5" in acked(fs))

        async with StandIn(script) as coordinator:
            client = AsyncTrainerClient(coordinator.url, "t", "tr", window=1, acked_ids_kept=3)
            await client.connect()
            for _ in range(6):
                await client.next_group(timeout=5)
            await client.close()
            self.assertEqual(client.remembered_ids, 3)


if __name__ == "__main__":
    unittest.main()
