// Why: the Responses SSE event sequence for a finished response, in the order OpenAI sends it and
// the official SDK's ResponseStream and codex validate (created → in_progress → per item:
// added, part/delta/done events, done → completed), each frame with an `event:` line, a `type`
// and an increasing `sequence_number`.
import type { PolarError } from "../../../../protocol/errors.ts";
import type { PivotRequest, PivotResponse } from "../../pivot.ts";
import { sseFrame, type SseFrame } from "../dialect.ts";
import { openAiErrorObject } from "../openai-errors.ts";
import { unixSeconds } from "../shared.ts";
import {
  finalStatus,
  outputItems,
  outputText,
  PROMPT_PARAM,
  RESPONSE_PREFIX,
  responseObject,
  type FunctionCallItem,
  type MessageItem,
  type OutputItem,
  type ReasoningItem,
} from "./render.ts";

class EventWriter {
  readonly frames: SseFrame[] = [];
  private sequence = 0;

  emit(type: string, fields: Record<string, unknown>): void {
    this.frames.push(sseFrame({ type, sequence_number: this.sequence++, ...fields }, type));
  }
}

function reasoningEvents(events: EventWriter, item: ReasoningItem, outputIndex: number): void {
  const at = { item_id: item.id, output_index: outputIndex };
  events.emit("response.output_item.added", { output_index: outputIndex, item: { ...item, summary: [] } });
  item.summary.forEach((part, summaryIndex) => {
    const where = { ...at, summary_index: summaryIndex };
    events.emit("response.reasoning_summary_part.added", { ...where, part: { type: "summary_text", text: "" } });
    events.emit("response.reasoning_summary_text.delta", { ...where, delta: part.text });
    events.emit("response.reasoning_summary_text.done", { ...where, text: part.text });
    events.emit("response.reasoning_summary_part.done", { ...where, part });
  });
  events.emit("response.output_item.done", { output_index: outputIndex, item });
}

function messageEvents(events: EventWriter, item: MessageItem, outputIndex: number): void {
  events.emit("response.output_item.added", {
    output_index: outputIndex,
    item: { ...item, status: "in_progress", content: [] },
  });
  item.content.forEach((part, contentIndex) => {
    const where = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
    events.emit("response.content_part.added", { ...where, part: outputText("") });
    if (part.text) events.emit("response.output_text.delta", { ...where, delta: part.text, logprobs: [] });
    events.emit("response.output_text.done", { ...where, text: part.text, logprobs: [] });
    events.emit("response.content_part.done", { ...where, part });
  });
  events.emit("response.output_item.done", { output_index: outputIndex, item });
}

function functionCallEvents(events: EventWriter, item: FunctionCallItem, outputIndex: number): void {
  const at = { item_id: item.id, output_index: outputIndex };
  events.emit("response.output_item.added", {
    output_index: outputIndex,
    item: { ...item, arguments: "", status: "in_progress" },
  });
  if (item.arguments) events.emit("response.function_call_arguments.delta", { ...at, delta: item.arguments });
  events.emit("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments });
  events.emit("response.output_item.done", { output_index: outputIndex, item });
}

function itemEvents(events: EventWriter, item: OutputItem, outputIndex: number): void {
  switch (item.type) {
    case "reasoning":
      return reasoningEvents(events, item, outputIndex);
    case "message":
      return messageEvents(events, item, outputIndex);
    case "function_call":
      return functionCallEvents(events, item, outputIndex);
  }
}

export function renderResponsesStream(response: PivotResponse, request: PivotRequest): SseFrame[] {
  const events = new EventWriter();
  const createdAt = unixSeconds();
  const pending = responseObject(response, request, createdAt, "in_progress", []);
  events.emit("response.created", { response: pending });
  events.emit("response.in_progress", { response: pending });
  const items = outputItems(response, request);
  items.forEach((item, outputIndex) => itemEvents(events, item, outputIndex));
  const status = finalStatus(response);
  const finished = responseObject(response, request, createdAt, status, items);
  events.emit(status === "completed" ? "response.completed" : "response.incomplete", { response: finished });
  return events.frames;
}

/**
 * A failure after the headers went out: an `error` event (the SDK raises it as an APIError) then
 * `response.failed` with `response.error.code` (codex reads it: `context_length_exceeded` stops,
 * other codes are retried).
 */
export function renderResponsesStreamError(error: PolarError): SseFrame[] {
  const wire = openAiErrorObject(error, PROMPT_PARAM);
  const code = wire.code ?? wire.type;
  const events = new EventWriter();
  events.emit("error", { code, message: wire.message, param: wire.param });
  events.emit("response.failed", {
    response: {
      id: `${RESPONSE_PREFIX}failed_${crypto.randomUUID().replaceAll("-", "")}`,
      object: "response",
      created_at: unixSeconds(),
      status: "failed",
      error: { code, message: wire.message },
      incomplete_details: null,
      output: [],
      usage: null,
    },
  });
  return events.frames;
}
