// Why: builds the Response object (output items, status, usage) for a finished pivot response.
// The non-streaming body and the stream's final `response.completed` both come from here, so a
// streaming client's `finalResponse()` equals the non-streaming body by construction.
import type { PivotRequest, PivotResponse, PivotToolCall } from "../../pivot.ts";
import { renderHintsOf, shownContent, unixSeconds } from "../shared.ts";
import { ResponsesRenderHints } from "./parse.ts";

export const RESPONSE_PREFIX = "resp_";
/** The request field that holds the prompt, named as `param` of a context-length error. */
export const PROMPT_PARAM = "input";

export interface ReasoningItem {
  type: "reasoning";
  id: string;
  summary: { type: "summary_text"; text: string }[];
}
export interface OutputText {
  type: "output_text";
  text: string;
  annotations: never[];
  logprobs: never[];
}
export interface MessageItem {
  type: "message";
  id: string;
  status: "completed" | "incomplete";
  role: "assistant";
  content: OutputText[];
}
export interface FunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  arguments: string;
  status: "completed";
}
export type OutputItem = ReasoningItem | MessageItem | FunctionCallItem;

export function responseId(response: PivotResponse): string {
  return response.id.startsWith(RESPONSE_PREFIX) ? response.id : `${RESPONSE_PREFIX}${response.id}`;
}

/** The bare id shared by the response and its items (`resp_X` → `rs_X`, `msg_X`, `fc_X_0`). */
function itemIdBase(response: PivotResponse): string {
  return responseId(response).slice(RESPONSE_PREFIX.length);
}

export function outputText(text: string): OutputText {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

function functionCallItem(call: PivotToolCall, id: string, hints: ResponsesRenderHints): FunctionCallItem {
  const routed = hints.tool_namespaces[call.name];
  const item: FunctionCallItem = {
    type: "function_call",
    id,
    call_id: call.id,
    name: routed ? routed.name : call.name,
    arguments: call.arguments,
    status: "completed",
  };
  if (routed) item.namespace = routed.namespace;
  return item;
}

/**
 * Output items in the order the model produced them: reasoning, then the message (omitted when a
 * tool-calling turn has no shown text, see shownContent), then one function_call per tool call.
 */
export function outputItems(response: PivotResponse, request: PivotRequest): OutputItem[] {
  const base = itemIdBase(response);
  const hints = renderHintsOf(ResponsesRenderHints, request);
  const items: OutputItem[] = [];
  if (response.reasoning) {
    items.push({ type: "reasoning", id: `rs_${base}`, summary: [{ type: "summary_text", text: response.reasoning }] });
  }
  if (shownContent(response) !== "" || response.tool_calls.length === 0) {
    items.push({
      type: "message",
      id: `msg_${base}`,
      status: response.finish_reason === "length" ? "incomplete" : "completed",
      role: "assistant",
      content: [outputText(response.content)],
    });
  }
  response.tool_calls.forEach((call, index) => items.push(functionCallItem(call, `fc_${base}_${index}`, hints)));
  return items;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

/** The Response envelope; `output`/`usage` are filled in only once the response is finished. */
export function responseObject(response: PivotResponse, request: PivotRequest, createdAt: number, status: ResponseStatus, output: OutputItem[]) {
  const finished = status === "completed" || status === "incomplete";
  const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = response.usage;
  return {
    id: responseId(response),
    object: "response",
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    max_output_tokens: request.sampling.max_tokens ?? null,
    model: response.model,
    output,
    parallel_tool_calls: true,
    temperature: request.sampling.temperature ?? null,
    tool_choice: "auto",
    tools: [],
    top_p: request.sampling.top_p ?? null,
    usage: finished
      ? {
          input_tokens: promptTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: completionTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: promptTokens + completionTokens,
        }
      : null,
  };
}

export function finalStatus(response: PivotResponse): "completed" | "incomplete" {
  return response.finish_reason === "length" ? "incomplete" : "completed";
}

export function renderResponsesBody(response: PivotResponse, request: PivotRequest) {
  return responseObject(response, request, unixSeconds(), finalStatus(response), outputItems(response, request));
}
