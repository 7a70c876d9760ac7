// Why: rebuilding needs a model's tokenizer and chat template but must not depend on how they
// are loaded (node/tokenizer in production, a test adapter in tests); this is the narrow port.
import type { Message, Tool } from "../../protocol/chat.ts";

export interface ChatRenderInput {
  messages: readonly Message[];
  tools: readonly Tool[];
  /** The request's `thinking` flag (chat_template_kwargs.enable_thinking). */
  thinking?: boolean;
  addGenerationPrompt: boolean;
}

export interface TrajectoryTokenizer {
  /** Token ids of text, recognising special tokens written in it (as engines do for templates). */
  encode(text: string): number[];
  /** Text of ids, special tokens kept. */
  decode(ids: readonly number[]): string;
  /** The model's chat template applied to a pivot conversation. */
  renderChat(input: ChatRenderInput): string;
}

/** ChatML markers used to cut history into messages (Qwen3 and other ChatML templates). */
export const CHATML = { messageStart: "<|im_start|>", messageEnd: "<|im_end|>", assistantHeader: "<|im_start|>assistant\n" } as const;

export function singleTokenId(tokenizer: TrajectoryTokenizer, text: string): number {
  const ids = tokenizer.encode(text);
  if (ids.length !== 1 || ids[0] === undefined) throw new Error(`expected ${JSON.stringify(text)} to be one token, got ${ids.length}`);
  return ids[0];
}
