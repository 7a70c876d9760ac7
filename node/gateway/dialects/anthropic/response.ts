// Why: the non-streaming `POST /v1/messages` answer, a Message object as the official SDK types it.
import type { PivotRequest, PivotResponse } from "../../pivot.ts";
import { type ContentBlock, contentBlocks, messageId, type StopReason, stopReason, stopSequence, usage } from "./content.ts";

export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  stop_details: null;
  container: null;
  usage: ReturnType<typeof usage>;
}

/** The model name echoed is the one the client asked for, as Anthropic does. */
export function renderMessage(response: PivotResponse, request: PivotRequest): AnthropicMessage {
  return {
    id: messageId(response),
    type: "message",
    role: "assistant",
    model: request.model,
    content: contentBlocks(response),
    stop_reason: stopReason(response),
    stop_sequence: stopSequence(response),
    stop_details: null,
    container: null,
    usage: usage(response),
  };
}
