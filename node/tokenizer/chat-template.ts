// Why: vLLM builds a prompt by rendering the model's Jinja chat template (HF semantics) and then
// tokenizing the text with added tokens recognised. Rendering it ourselves with the same template
// gives the same prompt ids, which the mock engine serves and the `tito` backend sends.
//
// tojson: @huggingface/jinja's `tojson` writes Python's json.dumps default separators (", " and
// ": ") without ASCII escaping, exactly like transformers' `tojson` (ensure_ascii=False) that vLLM
// renders with — checked against Python jinja2 renders in chat-template.test.ts. Known residual
// difference: JS numbers carry no int/float distinction, so a JSON number written `1.0` (or
// `1e-07`) by Python prints as `1` (or `1e-7`) here; tool schemas and arguments rarely hold such.
import { Template } from "@huggingface/jinja";
import { getTokenizer, type BpeTokenizer } from "./bpe.ts";
import { defaultModelFolderPath } from "./model-folder.ts";

/** A tool call as the HF chat template expects it (arguments already parsed to an object). */
export interface TemplateToolCall {
  type: "function";
  id?: string;
  function: { name: string; arguments: unknown };
}

/** A message in the OpenAI/HF shape the chat template expects. */
export interface TemplateMessage {
  role: string;
  content: string | null;
  reasoning_content?: string | null;
  tool_calls?: TemplateToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** A tool as vLLM hands it to the template: `ChatCompletionToolsParam.model_dump()`. */
export interface TemplateTool {
  type: "function";
  function: { name: string; description: string | null; parameters: Record<string, unknown> | null };
}

export interface RenderOptions {
  tools?: TemplateTool[];
  /** Default true (vLLM's default for chat completions). */
  addGenerationPrompt?: boolean;
  /** `chat_template_kwargs.enable_thinking`; undefined leaves the template's default. */
  enableThinking?: boolean;
  /** Any other `chat_template_kwargs`. */
  templateKwargs?: Record<string, unknown>;
}

export class ChatTemplate {
  readonly tokenizer: BpeTokenizer;
  private readonly template: Template;

  constructor(tokenizer: BpeTokenizer) {
    this.tokenizer = tokenizer;
    this.template = new Template(tokenizer.folder.chatTemplate);
  }

  /** The prompt text, as vLLM's `apply_hf_chat_template` renders it. */
  render(messages: readonly TemplateMessage[], options: RenderOptions = {}): string {
    const context: Record<string, unknown> = {
      ...this.tokenizer.folder.specialTokensMap,
      ...options.templateKwargs,
      messages: messages.map(withTextContent),
      add_generation_prompt: options.addGenerationPrompt ?? true,
    };
    // HF passes `tools=None` when there are none; an empty list is falsy in the template too.
    if (options.tools && options.tools.length > 0) context.tools = options.tools;
    if (options.enableThinking !== undefined) context.enable_thinking = options.enableThinking;
    return this.template.render(context);
  }

  /** Prompt token ids: the rendered text tokenized with added tokens recognised. */
  renderIds(messages: readonly TemplateMessage[], options: RenderOptions = {}): number[] {
    return this.tokenizer.encode(this.render(messages, options));
  }
}

/** vLLM turns a missing/null content into "" before rendering (text-only conversation). */
function withTextContent(message: TemplateMessage): TemplateMessage {
  return message.content === null ? { ...message, content: "" } : message;
}

const cache = new Map<string, ChatTemplate>();

/** The chat template of a model folder (default: bundled Qwen3), compiled once and cached. */
export function getChatTemplate(folderPath: string = defaultModelFolderPath()): ChatTemplate {
  let template = cache.get(folderPath);
  if (!template) {
    template = new ChatTemplate(getTokenizer(folderPath));
    cache.set(folderPath, template);
  }
  return template;
}

/** Shorthand on the default model: rendered prompt text. */
export function renderChat(messages: readonly TemplateMessage[], options: RenderOptions = {}): string {
  return getChatTemplate().render(messages, options);
}

/** Shorthand on the default model: rendered prompt token ids. */
export function renderChatIds(messages: readonly TemplateMessage[], options: RenderOptions = {}): number[] {
  return getChatTemplate().renderIds(messages, options);
}
