// Why: Gym and NeMo RL read a rollout as one OpenAI Response; Polar has the calls the gateway
// recorded. This rebuilds the Response from them: per call, the tool results and later user
// turns the harness sent since its previous call, then what the model produced in Responses
// order (reasoning → message → function calls), with the call's token bundle on its last item.
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message, ToolCall } from "../../protocol/chat.ts";
import type { GymOutputItem, GymResponse, GymResponsesCreateParams, GymTrajectoryDetail } from "../../protocol/gym.ts";
import type { TrajectoryResult } from "../../protocol/trace.ts";
import { toolUseId } from "../gateway/dialects/anthropic/content.ts";
import { mainLineBundles, type CallBundle } from "./token-bundles.ts";

export interface ResponseFacts {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
  params: GymResponsesCreateParams;
  status: GymResponse["status"];
  /** Set for infrastructure failures. */
  errorMessage: string | null;
  strategy: GymTrajectoryDetail["strategy"];
  maxContextDrift: number | null;
}

export interface BuiltResponse {
  response: GymResponse;
  trajectory: GymTrajectoryDetail;
  /** Items carrying a token bundle. */
  bundleCount: number;
}

/** The messages a call's request added after the model's last turn (tool results, new user turns). */
function sentSinceLastTurn(messages: readonly Message[]): Message[] {
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  return messages.slice(lastAssistant + 1);
}

/** The tool call's id as the harness saw it (and sends back with its result): Anthropic's dialect renders `toolu_…`. */
function harnessCallId(call: RecordedCall, tool: ToolCall): string {
  return call.dialect === "anthropic" ? toolUseId(tool) : tool.id;
}

function modelItems(call: RecordedCall & { response: NonNullable<RecordedCall["response"]> }): GymOutputItem[] {
  const r = call.response;
  const items: GymOutputItem[] = [];
  if (r.reasoning) items.push({ type: "reasoning", id: `rs_${r.id}`, summary: [{ type: "summary_text", text: r.reasoning }] });
  if (r.content || r.tool_calls.length === 0) {
    items.push({
      type: "message",
      id: `msg_${r.id}`,
      role: "assistant",
      status: r.finish_reason === "length" ? "incomplete" : "completed",
      content: [{ type: "output_text", text: r.content, annotations: [] }],
    });
  }
  r.tool_calls.forEach((t, i) =>
    items.push({ type: "function_call", id: `fc_${r.id}_${i}`, call_id: harnessCallId(call, t), name: t.name, arguments: t.arguments, status: "completed" }),
  );
  return items;
}

function withBundle(item: GymOutputItem, bundle: CallBundle | undefined): GymOutputItem {
  if (!bundle || item.type === "function_call_output" || (item.type === "message" && item.role === "user")) return item;
  return { ...item, ...bundle.bundle };
}

/** The Response for a rollout's recorded `calls`, with token bundles from the main line of `trajectory`. */
export function buildResponse(calls: readonly RecordedCall[], trajectory: TrajectoryResult | null, facts: ResponseFacts): BuiltResponse {
  const ordered = [...calls].sort((a, b) => a.seq - b.seq);
  const line = mainLineBundles(ordered, trajectory);
  const output: GymOutputItem[] = [];
  const answered = new Set<string>();
  const userTurns = new Set<string>();
  let first = true;
  for (const call of ordered) {
    if (call.response === null) continue;
    if (!first) {
      for (const m of sentSinceLastTurn(call.request.messages)) {
        if (m.role === "tool" && m.tool_call_id !== undefined && !answered.has(m.tool_call_id)) {
          answered.add(m.tool_call_id);
          output.push({ type: "function_call_output", call_id: m.tool_call_id, output: m.content });
        } else if (m.role === "user" && !userTurns.has(m.content)) {
          userTurns.add(m.content);
          output.push({ type: "message", role: "user", content: [{ type: "input_text", text: m.content }] });
        }
      }
    }
    first = false;
    const items = modelItems(call as RecordedCall & { response: NonNullable<RecordedCall["response"]> });
    items[items.length - 1] = withBundle(items[items.length - 1]!, line.bundles.get(call.seq));
    output.push(...items);
  }

  const succeeded = ordered.filter((c) => c.response !== null);
  const mainCalls = [...line.bundles.keys()];
  const toolsFrom = ordered.find((c) => c.seq === mainCalls.at(-1)) ?? succeeded.at(-1);
  const input = succeeded.reduce((n, c) => n + c.response!.usage.prompt_tokens, 0);
  const generated = succeeded.reduce((n, c) => n + c.response!.usage.completion_tokens, 0);
  const trained = [...line.bundles.values()];
  return {
    response: {
      id: facts.id,
      object: "response",
      created_at: facts.createdAt,
      model: facts.model,
      status: facts.status,
      output,
      parallel_tool_calls: facts.params.parallel_tool_calls ?? true,
      tool_choice: facts.params.tool_choice ?? "auto",
      tools: (toolsFrom?.request.tools ?? []).map((t) => ({
        type: "function",
        name: t.name,
        description: t.description ?? null,
        parameters: t.parameters,
        strict: null,
      })),
      usage: {
        input_tokens: input,
        input_tokens_details: { cached_tokens: null },
        output_tokens: generated,
        output_tokens_details: { reasoning_tokens: null },
        total_tokens: input + generated,
      },
      error: facts.errorMessage === null ? null : { code: "server_error", message: facts.errorMessage },
      incomplete_details: null,
      instructions: facts.params.instructions ?? null,
      metadata: {},
      temperature: facts.params.temperature ?? null,
      top_p: facts.params.top_p ?? null,
    },
    trajectory: {
      strategy: facts.strategy,
      max_context_drift: facts.maxContextDrift,
      call_count: ordered.length,
      trace_count: line.traceCount,
      trained_calls: mainCalls,
      untrained_calls: [...line.untrained.entries()].sort((a, b) => a[0] - b[0]).map(([seq, reason]) => ({ seq, reason })),
      splits: (trajectory?.stats.splits ?? []).map((s) => ({ seq: s.seq, cause: s.cause })),
      context_exact_calls: trained.filter((b) => b.contextDrift === 0).length,
      context_drift_tokens: trained.reduce((n, b) => n + b.contextDrift, 0),
    },
    bundleCount: trained.length,
  };
}
