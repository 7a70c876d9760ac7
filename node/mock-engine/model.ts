// Why: the mock engine's "model": real tokenizer and chat template, scripted policy, length and
// context rules like vLLM/SGLang, and pseudo-random logprobs. Routes only translate wire formats.
import { getChatTemplate, type ChatTemplate, type RenderOptions, type TemplateMessage } from "../tokenizer/chat-template.ts";
import type { BpeTokenizer } from "../tokenizer/bpe.ts";
import { EngineError } from "./engine-error.ts";
import type { EngineApi, MockEngineOptions } from "./options.ts";
import { scriptedCompletion } from "./policy.ts";
import { sampleLogprobs, seedFrom, type TokenLogprob } from "./sampler.ts";
import { DEFAULT_SCRIPT } from "./script.ts";
import { TaskPolicy } from "./task-policy.ts";
import { findStopString } from "./stop-strings.ts";
import { TrainablePolicy } from "./trainable-policy.ts";

export interface GenerateInput {
  promptIds: number[];
  /** Requested output budget; undefined = up to the context limit. */
  maxTokens: number | undefined;
  requestSeed: number | undefined;
  /** Number of top candidates to report per position (0 = sampled token only). */
  topLogprobs: number;
  /** Stop strings (vLLM/SGLang `stop`). */
  stop?: readonly string[];
  /** Keep the matched stop string in the text (vLLM `include_stop_str_in_output`, SGLang `no_stop_trim`). */
  keepStopString?: boolean;
}

export interface Generation {
  /** Sampled ids; end with the EOS id unless truncated by the budget. */
  outputIds: number[];
  logprobs: number[];
  top: TokenLogprob[][];
  finishReason: "stop" | "length";
  /** The stop string that ended generation (finishReason "stop"); absent when EOS or length did. */
  stopString?: string;
  /** Output text without HF-special tokens (what vLLM returns as text), trimmed at a stop string. */
  text: string;
}

export class MockModel {
  readonly template: ChatTemplate;
  readonly tokenizer: BpeTokenizer;
  private readonly regularVocabSize: number;
  private readonly taskPolicy: TaskPolicy | undefined;
  /** The learnable solve / mis-solve choice (options.trainable). */
  readonly trainable: TrainablePolicy | undefined;

  constructor(readonly options: MockEngineOptions) {
    this.template = getChatTemplate(options.modelFolder);
    this.tokenizer = this.template.tokenizer;
    this.regularVocabSize = Object.keys(this.tokenizer.folder.vocab).length;
    this.trainable = options.trainable ? new TrainablePolicy(this.tokenizer, () => this.taskPolicy?.taskIds ?? [], options.successProbability) : undefined;
    this.taskPolicy = options.tasks
      ? TaskPolicy.fromFile(options.tasks, { successProbability: options.successProbability, seed: options.seed, chooser: this.trainable })
      : undefined;
  }

  /**
   * The prompt text and ids of a chat. Input the template cannot render (a schema nested
   * thousands deep overflows its recursion) is the request's fault: a 400, as vLLM answers it.
   */
  renderChat(messages: TemplateMessage[], options: RenderOptions): { text: string; ids: number[] } {
    let text: string;
    try {
      text = this.template.render(messages, options);
    } catch (err) {
      throw new EngineError("bad_request", `The chat template could not be applied to the request: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { text, ids: this.encode(text) };
  }

  /** Token ids of prompt text; text the tokenizer cannot take (tiktoken fails on a ~1 MB word) is a 400. */
  encode(text: string): number[] {
    try {
      return this.tokenizer.encode(text);
    } catch {
      throw new EngineError("bad_request", `The tokenizer could not encode the prompt (${text.length} characters).`);
    }
  }

  /** Context rules, then the scripted continuation of the prompt. */
  generate(input: GenerateInput, api: EngineApi = this.options.dialect): Generation {
    const maxTokens = this.checkContext(input.promptIds.length, input.maxTokens, api);
    const promptText = this.tokenizer.decode(input.promptIds);
    const script = this.options.script ?? DEFAULT_SCRIPT;
    const complete = () => scriptedCompletion(promptText, script, this.taskPolicy);
    const { value: completion, decision } = this.trainable ? this.trainable.during(complete) : { value: complete(), decision: undefined };
    const fullIds = [...this.tokenizer.encode(completion), this.tokenizer.eosTokenId];
    const stopped = findStopString(this.tokenizer, fullIds, input.stop ?? [], input.keepStopString === true);
    const sampledIds = stopped ? fullIds.slice(0, stopped.tokenCount) : fullIds;
    const outputIds = sampledIds.slice(0, maxTokens);
    const truncated = outputIds.length < sampledIds.length;
    const seed = seedFrom(this.options.seed, input.requestSeed ?? 0, input.promptIds);
    const { logprobs, top } = this.trainable
      ? this.trainable.sampleLogprobs(outputIds, decision, input.topLogprobs, this.regularVocabSize)
      : sampleLogprobs(outputIds, input.topLogprobs, seed, this.regularVocabSize);
    return {
      outputIds,
      logprobs,
      top,
      finishReason: truncated ? "length" : "stop",
      ...(stopped && !truncated && { stopString: stopped.stop }),
      text: stopped && !truncated ? stopped.text : this.tokenizer.decode(outputIds, { skipSpecialTokens: true }),
    };
  }

  /** A token as vLLM names it in logprobs: its decoded text (partial UTF-8 → U+FFFD). */
  tokenText(id: number): string {
    return this.tokenizer.decode([id]);
  }

  /** vLLM's `bytes`: UTF-8 of the decoded token text. */
  tokenTextBytes(id: number): number[] {
    return Array.from(new TextEncoder().encode(this.tokenText(id)));
  }

  /** The output budget after vLLM's / SGLang's context checks. */
  private checkContext(promptLen: number, maxTokens: number | undefined, api: EngineApi): number {
    const limit = this.options.maxModelLen;
    if (maxTokens !== undefined && maxTokens < 1) {
      throw new EngineError("bad_request", `max_tokens must be at least 1, got ${maxTokens}.`, "max_tokens");
    }
    if (api === "sglang") {
      if (promptLen >= limit) {
        throw new EngineError("context_length", `The input (${promptLen} tokens) is longer than the model's context length (${limit} tokens).`);
      }
      const budget = maxTokens ?? limit - promptLen;
      if (promptLen + budget > limit) {
        throw new EngineError(
          "context_length",
          `Requested token count exceeds the model's maximum context length of ${limit} tokens. ` +
            `You requested a total of ${promptLen + budget} tokens: ${promptLen} tokens from the input messages and ` +
            `${budget} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
        );
      }
      return budget;
    }
    if (promptLen >= limit) {
      throw new EngineError(
        "context_length",
        `This model's maximum context length is ${limit} tokens. However, your request has ${promptLen} input tokens. ` +
          "Please reduce the length of the input messages.",
        "input_tokens",
      );
    }
    if (maxTokens === undefined) return limit - promptLen;
    if (promptLen + maxTokens > limit) {
      throw new EngineError(
        "context_length",
        `This model's maximum context length is ${limit} tokens. However, you requested ${promptLen + maxTokens} tokens ` +
          `(${promptLen} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
        "max_tokens",
      );
    }
    return maxTokens;
  }
}
