// Why: one import point for the tokenizer module (tokenize, render chat templates, parse Qwen3
// output), used by the mock engine and the gateway's `tito` backend.
export { BpeTokenizer, getTokenizer, type DecodeOptions } from "./bpe.ts";
export { defaultModelFolderPath, loadModelFolder, type ModelFolder, type AddedTokenInfo } from "./model-folder.ts";
export {
  ChatTemplate,
  getChatTemplate,
  renderChat,
  renderChatIds,
  type RenderOptions,
  type TemplateMessage,
  type TemplateTool,
  type TemplateToolCall,
} from "./chat-template.ts";
export { pivotToTemplateMessages, pivotToTemplateTools, parseArguments } from "./pivot-to-template.ts";
export {
  parseQwen3Output,
  splitReasoning,
  splitToolCalls,
  THINK_START,
  THINK_END,
  TOOL_CALL_START,
  TOOL_CALL_END,
  type ParsedToolCall,
  type Qwen3Output,
  type Qwen3ParseOptions,
} from "./qwen3-output.ts";
export { pythonJsonDumps } from "./python-json.ts";
