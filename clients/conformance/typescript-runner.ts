// Why: the conformance cases (cases.json) are shared by every trainer client; this runs them with
// the TypeScript client. The client hands out results one by one, so groups are assembled here
// from its results and group messages the way a trainer would; every check is on what arrived.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ReplaceFlat, type StreamedResult } from "../../protocol/trainer-stream.ts";
import { TrainerClient, type GroupMessage } from "../typescript/trainer-client.ts";

const Step = z.discriminatedUnion("op", [
  z.object({
    op: z.literal("submit"),
    as: z.string().optional(),
    task: z.union([z.string(), z.object({ inline: z.string() })]),
    n: z.number().int(),
    expect_error: z.string().optional(),
    min_reward_std: z.number().optional(),
    replace_flat: ReplaceFlat.optional(),
  }),
  z.object({ op: z.literal("take"), groups: z.array(z.string()) }),
  z.object({ op: z.literal("cancel"), group: z.string() }),
  z.object({ op: z.literal("pause"), expect_nodes: z.number().int() }),
  z.object({ op: z.literal("resume"), version_offset: z.number().int(), expect_error: z.string().optional() }),
  z.object({ op: z.literal("restart_coordinator") }),
  z.object({ op: z.literal("ack"), groups: z.array(z.string()) }),
  z.object({ op: z.literal("take_replacement"), of: z.string(), as: z.string() }),
]);

const GroupExpectation = z
  .object({
    status: z.enum(["completed", "cancelled"]),
    rollouts: z.number().int(),
    statuses: z.array(z.string()),
    usable: z.number().int().optional(),
    at_least: z.record(z.string(), z.number().int()).optional(),
    policy_version_offset: z.number().int().optional(),
    /** Dynamic sampling: `replaces` and `replaced_by` name groups of the case. */
    task_id: z.string().optional(),
    flat: z.boolean().optional(),
    replacement_index: z.number().int().optional(),
    replaces: z.string().nullable().optional(),
    replaced_by: z.string().nullable().optional(),
    replacement_exhausted: z.string().nullable().optional(),
  })
  .strict();

export const ConformanceCase = z.object({
  name: z.string(),
  description: z.string(),
  auto_ack: z.boolean(),
  steps: z.array(Step),
  expect: z
    .object({
      groups: z.record(z.string(), GroupExpectation),
      duplicates: z.object({ min: z.number().int(), max: z.number().int() }),
      rewards_in: z.array(z.number()).optional(),
      traces_well_formed: z.boolean().optional(),
      mean_advantages_match_coordinator: z.boolean().optional(),
      cancelled_rollouts: z.object({ masked: z.boolean(), failure_kind: z.string(), reward: z.null() }).optional(),
      /** Each group's reward_std is the population std of its coordinator rewards. */
      reward_std_matches_rewards: z.boolean().optional(),
    })
    .strict(),
});
export type ConformanceCase = z.infer<typeof ConformanceCase>;

export const CASES_PATH = join(import.meta.dir, "cases.json");

export function loadCases(): ConformanceCase[] {
  return z
    .object({ cases: z.array(ConformanceCase) })
    .passthrough()
    .parse(JSON.parse(readFileSync(CASES_PATH, "utf8"))).cases;
}

export interface LiveCluster {
  coordinatorUrl: string;
  trainerToken: string;
  /** Task id → instruction, for inline tasks. */
  instructions: Map<string, string>;
  restartCoordinator(): Promise<void>;
}

interface AssembledGroup {
  groupId: string;
  status: string;
  results: StreamedResult[];
  rewards: (number | null)[];
  advantages: (number | null)[];
  frame: GroupMessage;
}

/** What the cases call masked and the failure kind, read as the Python client reads them. */
function masked(r: StreamedResult): boolean {
  const unmasked = r.traces.some((t) => (t.metadata as { training_filter?: { masked?: unknown } } | undefined)?.training_filter?.masked !== true);
  return r.status !== "COMPLETED" || !unmasked;
}

function failureKind(r: StreamedResult): string | null {
  const cause = (r.metadata.failure as { cause?: unknown } | undefined)?.cause;
  if (typeof cause === "string") return cause;
  if (r.status === "COMPLETED") return null;
  return r.status === "CANCELLED" ? "cancelled" : "unreported";
}

async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

async function policyVersion(url: string): Promise<number> {
  return ((await (await fetch(`${url}/health`)).json()) as { policy_version: number }).policy_version;
}

/** Runs one case with a fresh TypeScript client; throws on the first expectation not met. */
export async function runCase(c: ConformanceCase, cluster: LiveCluster, trainerId: string): Promise<void> {
  const results = new Map<string, StreamedResult>();
  const groupFrames = new Map<string, GroupMessage>();
  const errors: { code: string; message: string }[] = [];
  const client = new TrainerClient({
    url: cluster.coordinatorUrl,
    token: cluster.trainerToken,
    trainerId,
    reconnectDelayMs: 100,
    autoAck: c.auto_ack,
    onResult: (r) => void results.set(r.result_id, r),
    onGroup: (g) => void groupFrames.set(g.group_id, g),
    onError: (e) => void errors.push(e),
  });
  try {
    await client.ready();
    const startVersion = await policyVersion(cluster.coordinatorUrl);
    const named = new Map<string, string>(); // case name → group id
    const taken = new Map<string, AssembledGroup>();
    const take = (name: string, id: string) => {
      const frame = groupFrames.get(id)!;
      taken.set(name, {
        groupId: id,
        status: frame.status,
        results: frame.rollout_ids.map((r) => results.get(r)!),
        rewards: frame.rewards,
        advantages: frame.advantages,
        frame,
      });
    };
    // A group the coordinator started in place of one of ours (replace_flat) is ours too.
    const checkOurs = () => {
      const ours = new Set([...named.values()]);
      for (const [id, frame] of groupFrames)
        check(ours.has(id) || (frame.replaces !== null && ours.has(frame.replaces)), `a group this case did not submit arrived: ${id}`);
    };
    const complete = (groupId: string) => {
      const frame = groupFrames.get(groupId);
      return frame !== undefined && frame.rollout_ids.every((id) => results.has(id));
    };
    for (const step of c.steps) {
      switch (step.op) {
        case "submit": {
          const task = typeof step.task === "string" ? step.task : { task_id: step.task.inline, instruction: cluster.instructions.get(step.task.inline)! };
          const sampling = {
            ...(step.min_reward_std !== undefined && { min_reward_std: step.min_reward_std }),
            ...(step.replace_flat && { replace_flat: step.replace_flat }),
          };
          const submitted = client.submit({ task, n: step.n, agent: { harness: "mini" }, ...sampling });
          if (step.expect_error) {
            const refused = await submitted.then(
              () => null,
              (err: Error) => err.message,
            );
            check(refused?.startsWith(`${step.expect_error}:`) === true, `submit should be refused with ${step.expect_error}, got ${refused}`);
          } else {
            named.set(step.as!, (await submitted).group_id);
          }
          break;
        }
        case "take": {
          const ids = step.groups.map((n) => named.get(n)!);
          await until(`groups ${step.groups.join(", ")}`, () => ids.every(complete), 300_000);
          for (const [name, id] of step.groups.map((n, i) => [n, ids[i]!] as const)) take(name, id);
          checkOurs();
          break;
        }
        case "take_replacement": {
          const id = groupFrames.get(named.get(step.of)!)!.replaced_by;
          check(id !== null, `group ${step.of} was not replaced`);
          named.set(step.as, id!);
          await until(`the replacement of ${step.of}`, () => complete(id!), 300_000);
          take(step.as, id!);
          checkOurs();
          break;
        }
        case "cancel":
          client.cancelGroup(named.get(step.group)!);
          break;
        case "pause": {
          const { nodes } = await client.pause();
          check(nodes === step.expect_nodes, `pause reached ${nodes} nodes, expected ${step.expect_nodes}`);
          break;
        }
        case "resume": {
          const before = errors.length;
          await client.resume(startVersion + step.version_offset);
          if (step.expect_error) {
            await until(`a ${step.expect_error} error`, () => errors.length > before, 30_000);
            check(errors[before]!.code === step.expect_error, `resume should be refused with ${step.expect_error}, got ${errors[before]!.code}`);
          } else {
            const deadline = Date.now() + 30_000;
            while ((await policyVersion(cluster.coordinatorUrl)) !== startVersion + step.version_offset) {
              if (Date.now() > deadline) throw new Error("the coordinator never took the new policy version");
              await Bun.sleep(20);
            }
          }
          break;
        }
        case "restart_coordinator":
          await cluster.restartCoordinator();
          break;
        case "ack":
          client.ack(step.groups.flatMap((n) => taken.get(n)!.results.map((r) => r.result_id)));
          break;
      }
    }

    const e = c.expect;
    check(taken.size === Object.keys(e.groups).length, `took ${taken.size} groups, expected ${Object.keys(e.groups).length}`);
    for (const [name, want] of Object.entries(e.groups)) {
      const group = taken.get(name);
      check(group !== undefined, `group ${name} never arrived`);
      check(group!.status === want.status, `${name}: status ${group!.status}, expected ${want.status}`);
      check(group!.results.length === want.rollouts, `${name}: ${group!.results.length} rollouts, expected ${want.rollouts}`);
      for (const r of group!.results) check(want.statuses.includes(r.status), `${name}: rollout status ${r.status} not in ${want.statuses.join(", ")}`);
      if (want.usable !== undefined) check(group!.results.filter((r) => !masked(r)).length === want.usable, `${name}: usable count`);
      for (const [status, min] of Object.entries(want.at_least ?? {})) {
        check(group!.results.filter((r) => r.status === status).length >= min, `${name}: fewer than ${min} ${status}`);
      }
      const frame = group!.frame;
      const idOf = (n: string | null | undefined) => (n === null || n === undefined ? null : named.get(n));
      if (want.task_id !== undefined) check(frame.task_id === want.task_id, `${name}: task ${frame.task_id}, expected ${want.task_id}`);
      if (want.flat !== undefined) check(frame.flat === want.flat, `${name}: flat ${frame.flat}, expected ${want.flat}`);
      if (want.replacement_index !== undefined)
        check(frame.replacement_index === want.replacement_index, `${name}: replacement_index ${frame.replacement_index}`);
      if (want.replaces !== undefined) check(frame.replaces === idOf(want.replaces), `${name}: replaces ${frame.replaces}, expected ${want.replaces}`);
      if (want.replaced_by !== undefined)
        check(frame.replaced_by === idOf(want.replaced_by), `${name}: replaced_by ${frame.replaced_by}, expected ${want.replaced_by}`);
      if (want.replacement_exhausted !== undefined)
        check(frame.replacement_exhausted === want.replacement_exhausted, `${name}: replacement_exhausted ${frame.replacement_exhausted}`);
      if (want.policy_version_offset !== undefined) {
        const version = startVersion + want.policy_version_offset;
        for (const r of group!.results) {
          check(r.policy_version_started === version, `${name}: started at ${r.policy_version_started}, expected ${version}`);
          for (const t of r.traces)
            for (const v of (t.metadata as { policy_versions: number[] }).policy_versions) check(v === version, `${name}: a call sampled at ${v}`);
        }
      }
    }
    const all = [...taken.values()].flatMap((g) => g.results);
    check(new Set(all.map((r) => r.rollout_id)).size === all.length, "a rollout arrived twice");
    check(client.counts.results === results.size, "results counted and kept differ");
    check(
      client.counts.duplicates >= e.duplicates.min && client.counts.duplicates <= e.duplicates.max,
      `duplicates ${client.counts.duplicates} outside [${e.duplicates.min}, ${e.duplicates.max}]`,
    );
    if (e.rewards_in)
      for (const r of all.filter((x) => !masked(x))) check(e.rewards_in.includes(r.reward!), `reward ${r.reward} not in ${e.rewards_in.join(", ")}`);
    if (e.traces_well_formed) {
      for (const r of all.filter((x) => !masked(x))) {
        check(r.traces.length > 0, "a usable rollout without traces");
        for (const trace of r.traces) {
          check(
            trace.loss_mask.length === trace.response_ids.length && trace.response_logprobs.length === trace.response_ids.length,
            "trace arrays misaligned",
          );
          const { calls, policy_versions: versions } = trace.metadata;
          check(
            Array.isArray(calls) && Array.isArray(versions) && versions.length === calls.length && calls.length > 0,
            "a trace without a policy version per call",
          );
          check(
            trace.loss_mask.some((m) => m === 1),
            "a usable trace without a trained token",
          );
        }
      }
    }
    if (e.mean_advantages_match_coordinator) {
      for (const group of taken.values()) {
        const rewards = group.results.map((r) => (masked(r) ? null : r.reward));
        const scored = rewards.filter((r): r is number => r !== null);
        const mean = scored.reduce((a, b) => a + b, 0) / scored.length;
        const ours = rewards.map((r) => (r === null ? null : r - mean));
        ours.forEach((a, i) =>
          check(a === null ? group.advantages[i] === null : Math.abs(a - group.advantages[i]!) < 1e-9, "mean advantages differ from the coordinator's"),
        );
      }
    }
    if (e.reward_std_matches_rewards) {
      for (const [name, group] of taken) {
        const scored = group.rewards.filter((r): r is number => r !== null);
        const mean = scored.reduce((a, b) => a + b, 0) / scored.length;
        const std = scored.length < 2 ? null : Math.sqrt(scored.reduce((a, b) => a + (b - mean) ** 2, 0) / scored.length);
        const got = group.frame.reward_std;
        check(std === null ? got === null : got !== null && Math.abs(got - std) < 1e-9, `${name}: reward_std ${got}, its rewards give ${std}`);
      }
    }
    if (e.cancelled_rollouts) {
      for (const r of all.filter((x) => x.status === "CANCELLED")) {
        check(masked(r) === e.cancelled_rollouts.masked, "a cancelled rollout's mask");
        check(failureKind(r) === e.cancelled_rollouts.failure_kind, `a cancelled rollout's failure kind ${failureKind(r)}`);
        check(r.reward === e.cancelled_rollouts.reward, "a cancelled rollout's reward");
      }
    }
  } finally {
    client.close();
  }
}
