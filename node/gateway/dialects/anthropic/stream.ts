// Why: a finished pivot response replayed as the Messages SSE event sequence that
// `@anthropic-ai/sdk`'s MessageStream accumulates and Claude Code consumes.
import type { PivotRequest, PivotResponse } from "../../pivot.ts";
import { type SseFrame, sseFrame } from "../dialect.ts";
import type { ContentBlock } from "./content.ts";
import { renderMessage } from "./response.ts";

function event(type: string, data: Record<string, unknown>): SseFrame {
  return sseFrame({ type, ...data }, type);
}

/** The block as `content_block_start` announces it (empty payload), then its deltas. */
function blockEvents(block: ContentBlock, index: number): SseFrame[] {
  const delta = (payload: Record<string, unknown>) => event("content_block_delta", { index, delta: payload });
  const frames: SseFrame[] = [];
  switch (block.type) {
    case "thinking":
      frames.push(event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }));
      frames.push(delta({ type: "thinking_delta", thinking: block.thinking }));
      frames.push(delta({ type: "signature_delta", signature: block.signature }));
      break;
    case "text":
      frames.push(event("content_block_start", { index, content_block: { type: "text", text: "", citations: null } }));
      frames.push(delta({ type: "text_delta", text: block.text }));
      break;
    case "tool_use":
      frames.push(event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }));
      frames.push(delta({ type: "input_json_delta", partial_json: JSON.stringify(block.input) }));
      break;
  }
  frames.push(event("content_block_stop", { index }));
  return frames;
}

export function renderMessageStream(response: PivotResponse, request: PivotRequest): SseFrame[] {
  const message = renderMessage(response, request);
  const start = {
    ...message,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...message.usage, output_tokens: 0 },
  };
  return [
    event("message_start", { message: start }),
    event("ping", {}),
    ...message.content.flatMap(blockEvents),
    event("message_delta", {
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence, stop_details: null },
      usage: message.usage,
    }),
    event("message_stop", {}),
  ];
}
