// The Gym response built from sessions recorded from the REAL harness CLIs (test/fixtures/
// trajectories: a Pi sub-agent, Codex / Claude Code / Qwen Code compactions, Pi with two queries,
// mini with Qwen3's thinking, thinking off) is read the way NeMo RL reads it: every trainable
// item's prompt extends all earlier prompt + generation ids, one bundle per model call on its last
// item, and calls off the main line carried without a bundle. The naive bundling (each call's
// raw prompt, as an adapter that copies the engine's ids would) is rejected by the same reader on
// these sessions — the check can fail, and does where it should.
import { describe, expect, test } from "bun:test";
import type { RecordedCall } from "../protocol/calls.ts";
import { GymResponse, GymResponsesCreateParams } from "../protocol/gym.ts";
import type { Strategy } from "../protocol/trace.ts";
import { buildResponse } from "../node/gym/response-builder.ts";
import { rebuild } from "../node/trajectory/index.ts";
import { qwen3Tokenizer } from "./support/trajectory/qwen3.ts";
import { consumeAsNemoRl, NemoRlRejected } from "./helpers/nemo-rl-consumer.ts";
import { allTrajectoryFixtures } from "./helpers/trajectory-fixtures.ts";

const tokenizer = qwen3Tokenizer();
const fixtures = allTrajectoryFixtures();
const byName = new Map(fixtures.map((f) => [f.name, f]));
const REBUILD_TIMEOUT_MS = 60_000;
const ROW = { responses_create_params: GymResponsesCreateParams.parse({ input: [{ role: "user", content: "Do the task." }] }) };

function build(calls: RecordedCall[], strategy: "template-aware" | "prefix-merge", maxContextDrift: number | null = null) {
  const trajectory = rebuild(calls, strategy as Strategy, { tokenizer, ...(maxContextDrift === null ? {} : { maxContextDrift }) });
  const built = buildResponse(calls, trajectory, {
    id: "resp_test",
    createdAt: 1_700_000_000,
    model: "Qwen/Qwen3-8B",
    params: ROW.responses_create_params,
    status: "completed",
    errorMessage: null,
    strategy,
    maxContextDrift,
  });
  return { ...built, rebuilt: trajectory };
}

/** The call an output item belongs to: `rs_<id>`, `msg_<id>`, `fc_<id>_<n>`. */
function callOf(itemId: string): string {
  if (itemId.startsWith("fc_")) return itemId.slice(3).replace(/_\d+$/, "");
  return itemId.slice(itemId.indexOf("_") + 1);
}

/** What a Gym answer with this response looks like to NeMo RL. */
function asResult(response: GymResponse) {
  return { ...ROW, response, reward: 1.0, instance_config: { mask_sample: false } };
}

describe.each(fixtures.map((f) => [f.name, f.calls] as const))("%s", (_name, calls) => {
  test.each([["template-aware"], ["prefix-merge"]] as const)(
    "%s: NeMo RL accepts it; one bundle per main-line call, on its last item, with its sampled ids and logprobs",
    (strategy) => {
      const { response, trajectory: detail, bundleCount } = build(calls, strategy);
      const parsed = GymResponse.parse(response);
      const sample = consumeAsNemoRl(ROW, asResult(parsed));
      expect(sample.message_log.length).toBe(2 * bundleCount);
      expect(bundleCount).toBe(detail.trained_calls.length);
      // Every call is accounted for exactly once: trained, or carried with a reason.
      expect([...detail.trained_calls, ...detail.untrained_calls.map((u) => u.seq)].sort((a, b) => a - b)).toEqual(calls.map((c) => c.seq));
      // The session's last call ends the main line.
      expect(detail.trained_calls.at(-1)).toBe(Math.max(...calls.map((c) => c.seq)));

      const bySeq = new Map(calls.map((c) => [c.seq, c]));
      const bundled = parsed.output.filter((item) => "generation_token_ids" in item && item.generation_token_ids !== undefined);
      expect(bundled.length).toBe(bundleCount);
      bundled.forEach((item, k) => {
        const call = bySeq.get(detail.trained_calls[k]!)!;
        const g = item as { generation_token_ids: number[]; generation_log_probs: number[]; prompt_token_ids: number[] };
        expect(g.generation_token_ids).toEqual(call.output_ids!);
        expect(g.generation_log_probs).toEqual(call.logprobs!);
        // The bundle is on the call's last item: no later item belongs to the same call.
        const at = parsed.output.indexOf(item);
        expect(parsed.output.slice(at + 1).some((o) => "id" in o && callOf(o.id) === call.response!.id)).toBe(false);
        if (strategy === "prefix-merge") expect(g.prompt_token_ids).toEqual(call.prompt_ids!);
      });
      if (strategy === "prefix-merge") expect(detail.context_drift_tokens).toBe(0);
      expect(detail.context_exact_calls).toBeLessThanOrEqual(bundleCount);

      // Within a call: reasoning → message → function calls; each tool result follows its call.
      const rank = { reasoning: 0, message: 1, function_call: 2 } as const;
      const answered = new Set<string>();
      let previous: { call: string; rank: number } | undefined;
      for (const item of parsed.output) {
        if (item.type === "function_call_output") {
          expect(answered.has(item.call_id)).toBe(true);
          continue;
        }
        if (item.type === "message" && item.role === "user") continue;
        if (item.type === "function_call") answered.add(item.call_id);
        const here = { call: callOf(item.id), rank: rank[item.type] };
        if (previous?.call === here.call) expect(here.rank).toBeGreaterThanOrEqual(previous.rank);
        previous = here;
      }
      expect(parsed.usage.total_tokens).toBe(
        calls.reduce((n, c) => n + (c.response?.usage.prompt_tokens ?? 0) + (c.response?.usage.completion_tokens ?? 0), 0),
      );
    },
    REBUILD_TIMEOUT_MS,
  );
});

describe("sessions that are not one token sequence", () => {
  const sessions = [
    "pi-subagent-thinking-on-vllm",
    "codex-compaction-thinking-on-vllm",
    "claude-code-compaction-thinking-on-vllm",
    "qwen-code-compaction-thinking-on-tito",
  ];

  test.each(sessions.map((s) => [s]))(
    "%s: the raw per-call prompts break NeMo RL's contiguity check",
    (name) => {
      const calls = byName.get(name)!.calls;
      const { response } = build(calls, "template-aware");
      // Put each call's own engine prompt on its last item, as an adapter copying the engine's ids does.
      const byResponseId = new Map(calls.map((c) => [c.response!.id, c]));
      const lastItemOf = new Map<string, number>();
      response.output.forEach((item, i) => {
        if ("id" in item) lastItemOf.set(callOf(item.id), i);
      });
      const naive = {
        ...response,
        output: response.output.map((item, i) => {
          const { prompt_token_ids: _p, generation_token_ids: _g, generation_log_probs: _l, ...rest } = item as Record<string, unknown>;
          const call = "id" in item ? byResponseId.get(callOf(item.id)) : undefined;
          return call && lastItemOf.get(call.response!.id) === i
            ? { ...rest, prompt_token_ids: call.prompt_ids, generation_token_ids: call.output_ids, generation_log_probs: call.logprobs }
            : rest;
        }),
      };
      expect(() => consumeAsNemoRl(ROW, asResult(naive as GymResponse))).toThrow(NemoRlRejected);
    },
    REBUILD_TIMEOUT_MS,
  );

  test.each(sessions.map((s) => [s]))(
    "%s: the main line is the trace that ends the rollout; the other calls are carried without a bundle",
    (name) => {
      const calls = byName.get(name)!.calls;
      for (const strategy of ["template-aware", "prefix-merge"] as const) {
        const { trajectory: detail, response } = build(calls, strategy);
        expect(detail.trace_count).toBeGreaterThan(1);
        expect(detail.untrained_calls.some((u) => u.reason === "off_main_line")).toBe(true);
        expect(detail.splits.length).toBeGreaterThan(0);
        // Carried calls still appear in the response, with their text, just without tokens.
        const ids = new Set(response.output.flatMap((item) => ("id" in item ? [callOf(item.id)] : [])));
        for (const u of detail.untrained_calls) expect(ids.has(calls.find((c) => c.seq === u.seq)!.response!.id)).toBe(true);
      }
    },
    REBUILD_TIMEOUT_MS,
  );

  test(
    "one call's bundle copied onto every item of its call (Gym PR #1349's adapter) is rejected as soon as a call has two items",
    () => {
      const calls = byName.get("mini-thinking-on-vllm")!.calls;
      const { response } = build(calls, "template-aware");
      const bundleOf = new Map<string, Record<string, unknown>>();
      for (const item of response.output) {
        if ("id" in item && "generation_token_ids" in item && item.generation_token_ids) {
          bundleOf.set(callOf(item.id), {
            prompt_token_ids: item.prompt_token_ids,
            generation_token_ids: item.generation_token_ids,
            generation_log_probs: item.generation_log_probs,
          });
        }
      }
      const copied = {
        ...response,
        output: response.output.map((item) => ("id" in item && bundleOf.has(callOf(item.id)) ? { ...item, ...bundleOf.get(callOf(item.id)) } : item)),
      };
      expect(response.output.filter((i) => "id" in i && callOf(i.id) === calls[0]!.response!.id).length).toBeGreaterThan(1);
      expect(() => consumeAsNemoRl(ROW, asResult(copied as GymResponse))).toThrow(NemoRlRejected);
      // Ours passes the same reader.
      expect(consumeAsNemoRl(ROW, asResult(response)).message_log.length).toBe(2 * calls.length);
    },
    REBUILD_TIMEOUT_MS,
  );

  test(
    "Pi's sub-agent: its calls are carried without a bundle; the main agent's calls are the main line",
    () => {
      const calls = byName.get("pi-subagent-thinking-on-vllm")!.calls;
      const isSub = (c: RecordedCall) => c.request.messages[0]!.content.startsWith("You are a file-writing sub-agent.");
      const { trajectory: detail } = build(calls, "template-aware");
      const subSeqs = calls.filter(isSub).map((c) => c.seq);
      expect(subSeqs.length).toBeGreaterThan(0);
      for (const seq of subSeqs) expect(detail.untrained_calls).toContainEqual({ seq, reason: "off_main_line" });
      expect(detail.trained_calls.every((seq) => !subSeqs.includes(seq))).toBe(true);
      expect(detail.splits.map((s) => s.cause)).toContain("sub-agent");
    },
    REBUILD_TIMEOUT_MS,
  );

  test(
    "a compaction: the calls after it are the main line, the ones before it carried",
    () => {
      const calls = byName.get("codex-compaction-thinking-on-vllm")!.calls;
      const { trajectory: detail } = build(calls, "template-aware");
      const split = detail.splits.find((s) => s.cause === "compaction");
      expect(split).toBeDefined();
      expect(detail.trained_calls.every((seq) => seq >= split!.seq)).toBe(true);
      expect(detail.untrained_calls.filter((u) => u.reason === "off_main_line").every((u) => u.seq < split!.seq)).toBe(true);
    },
    REBUILD_TIMEOUT_MS,
  );

  test(
    "mini with thinking on: template-aware keeps every call on one line (with drift), max_context_drift 0 keeps only exact prompts",
    () => {
      const calls = byName.get("mini-thinking-on-vllm")!.calls;
      const loose = build(calls, "template-aware").trajectory;
      expect(loose.trained_calls.length).toBe(calls.length);
      expect(loose.context_drift_tokens).toBeGreaterThan(0);
      const exact = build(calls, "template-aware", 0);
      expect(exact.trajectory.context_drift_tokens).toBe(0);
      expect(exact.trajectory.context_exact_calls).toBe(exact.trajectory.trained_calls.length);
      expect(exact.trajectory.trained_calls.length).toBeLessThan(calls.length);
      consumeAsNemoRl(ROW, asResult(exact.response));
      const byResponseId = new Map(calls.map((c) => [c.response!.id, c]));
      for (const item of exact.response.output) {
        if ("prompt_token_ids" in item && item.prompt_token_ids) expect(item.prompt_token_ids).toEqual(byResponseId.get(callOf(item.id))!.prompt_ids!);
      }
    },
    REBUILD_TIMEOUT_MS,
  );
});
