// Sessions recorded through the real gateway (official OpenAI SDK → gateway → vllm backend →
// mock engine with the real Qwen3 template), then rebuilt.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { RecordedCall } from "../../protocol/calls.ts";
import { AdminErrorBody } from "../../protocol/errors.ts";
import { TrajectoryResult } from "../../protocol/trace.ts";
import { startStack, type Stack } from "../../test/helpers/stack.ts";
import { rebuild } from "./index.ts";
import { expectFaithfulMerge } from "../../test/support/trajectory/faithfulness.ts";
import { GatewayAgent, loopScript } from "../../test/support/trajectory/gateway-agent.ts";
import { qwen3Tokenizer } from "../../test/support/trajectory/qwen3.ts";

const tokenizer = qwen3Tokenizer();
/** Servers and real HTTP calls: generous, since the default 5 s fails on a busy machine. */
const SERVER_TIMEOUT_MS = 60_000;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ engine: { script: loopScript(3, 3) } });
}, SERVER_TIMEOUT_MS);
afterAll(async () => {
  await stack.stop();
}, SERVER_TIMEOUT_MS);

async function recorded(drive: (client: OpenAI) => Promise<void>): Promise<{ id: string; calls: RecordedCall[] }> {
  const session = await stack.session();
  await drive(new OpenAI({ baseURL: session.openai_base_url, apiKey: session.token, maxRetries: 0 }));
  return { id: session.id, calls: await stack.calls(session.id) };
}

describe("sessions recorded through the gateway", () => {
  test(
    "thinking off: glue splits prefix-merge at every call; template-aware keeps one faithful trace",
    async () => {
      const { calls } = await recorded(async (client) => {
        await new GatewayAgent(client, { system: "You are a coding agent.", thinking: false }).solve("Inspect the sources.");
      });
      expect(calls.length).toBe(4);
      const strict = rebuild(calls, "prefix-merge", { tokenizer });
      expect(strict.stats.split_counts["generation-glue"]).toBe(3);
      const aware = rebuild(calls, "template-aware", { tokenizer });
      expect(aware.traces.length).toBe(1);
      expectFaithfulMerge(aware.traces[0]!, calls);
      expect(aware.stats.normalisations["generation-glue"]).toBe(3);
    },
    SERVER_TIMEOUT_MS,
  );

  test(
    "thinking on with reasoning dropped, two queries: one template-aware trace",
    async () => {
      const { calls } = await recorded(async (client) => {
        const agent = new GatewayAgent(client, { system: "You are a coding agent.", thinking: true });
        await agent.solve("Inspect the sources.");
        await agent.solve("Now the tests.");
      });
      expect(calls.length).toBe(8);
      const aware = rebuild(calls, "template-aware", { tokenizer });
      expect(aware.traces.length).toBe(1);
      expectFaithfulMerge(aware.traces[0]!, calls);
      expect(aware.stats.normalisations["thinking-strip"]).toBe(7);
      expect(rebuild(calls, "prefix-merge", { tokenizer }).stats.trace_count).toBe(8);
    },
    SERVER_TIMEOUT_MS,
  );

  test(
    "a sub-agent and a compaction split every merge strategy, with their causes",
    async () => {
      const { calls } = await recorded(async (client) => {
        const main = new GatewayAgent(client, { system: "You are a coding agent.", thinking: true, keepReasoning: true }).ask("Fix the bug.");
        const sub = new GatewayAgent(client, { system: "You are a file-search sub-agent.", thinking: true, keepReasoning: true }).ask("Find the config.");
        await main.step();
        await sub.step();
        await main.step();
        while (!(await sub.step()));
        while (!(await main.step()));
        const compacted = new GatewayAgent(client, {
          system: "You are a coding agent.",
          thinking: true,
          keepReasoning: true,
          history: [{ role: "user", content: "Summary: the bug is fixed; the config was found." }],
        });
        await compacted.solve("Now write the changelog.");
      });
      const mainSeqs = [0, 2, 6, 7];
      const subSeqs = [1, 3, 4, 5];
      const compactedSeqs = calls.slice(8).map((c) => c.seq);
      const aware = rebuild(calls, "template-aware", { tokenizer });
      expect(aware.traces.map((t) => t.calls)).toEqual([mainSeqs, subSeqs, compactedSeqs]);
      expect(aware.stats.splits.map((s) => [s.seq, s.cause])).toEqual([
        [1, "sub-agent"],
        [8, "compaction"],
      ]);
      aware.traces.forEach((t) => expectFaithfulMerge(t, calls));

      // Strict prefix-merge may split more (any re-rendering asymmetry), but never mixes the
      // conversations, and names the same structural causes.
      const strict = rebuild(calls, "prefix-merge", { tokenizer });
      for (const trace of strict.traces) {
        expect([mainSeqs, subSeqs, compactedSeqs].some((group) => trace.calls.every((seq) => group.includes(seq)))).toBe(true);
        expectFaithfulMerge(trace, calls);
      }
      const causeOf = new Map(strict.stats.splits.map((s) => [s.seq, s.cause]));
      expect(causeOf.get(1)).toBe("sub-agent");
      expect(causeOf.get(8)).toBe("compaction");
    },
    SERVER_TIMEOUT_MS,
  );

  test(
    "GET /v1/sessions/:id/trajectory serves the same rebuild",
    async () => {
      const { id, calls } = await recorded(async (client) => {
        await new GatewayAgent(client, { system: "You are a coding agent.", thinking: false }).solve("Inspect.");
      });
      const res = await stack.admin(`/v1/sessions/${id}/trajectory?strategy=template-aware`);
      expect(res.status).toBe(200);
      const served = TrajectoryResult.parse(await res.json());
      const local = rebuild(calls, "template-aware", { tokenizer });
      expect(served.traces).toEqual(local.traces);
      expect({ ...served.stats, rebuild_ms: 0 }).toEqual({ ...local.stats, rebuild_ms: 0 });
      expect(served.stats.context_exact_calls).toBe(1);
      expect(served.stats.context_drift_tokens).toBeGreaterThan(0);

      // max_context_drift=0: template-aware merges only exact contexts, as prefix-merge does.
      const exactOnly = TrajectoryResult.parse(await (await stack.admin(`/v1/sessions/${id}/trajectory?strategy=template-aware&max_context_drift=0`)).json());
      expect(exactOnly.traces.map((t) => t.calls)).toEqual(rebuild(calls, "prefix-merge", { tokenizer }).traces.map((t) => t.calls));
      expect(exactOnly.stats.context_drift_tokens).toBe(0);
      for (const bad of ["-1", "1.5", "lots"]) {
        const refused = await stack.admin(`/v1/sessions/${id}/trajectory?max_context_drift=${bad}`);
        expect(refused.status).toBe(400);
        expect(AdminErrorBody.parse(await refused.json()).error).toEqual({ code: "bad_request", message: "max_context_drift must be a non-negative integer" });
      }
    },
    SERVER_TIMEOUT_MS,
  );
});
