// Why: every dialect (Chat Completions, Responses, Anthropic Messages) converts to and from one
// internal chat shape and every backend consumes it, so N dialects × M backends costs N + M.
// The shapes are wire schemas (they are recorded), so they live in protocol/; this module gives
// them the gateway's names.
export type {
  ChatRequest as PivotRequest,
  ChatResponse as PivotResponse,
  Message as PivotMessage,
  Tool as PivotTool,
  ToolCall as PivotToolCall,
  ToolChoice as PivotToolChoice,
  Sampling as PivotSampling,
  FinishReason,
  Usage as PivotUsage,
} from "../../protocol/chat.ts";
export type JsonSchema = Record<string, unknown>;
