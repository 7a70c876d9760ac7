// Why: "tokens in, tokens out" — the gateway renders the chat template and tokenizes itself,
// sends prompt ids to the engine and parses the sampled text itself. The prompt is then exactly
// what Polar decided (optionally with earlier turns' sampled ids spliced back), independent of the
// engine's template handling, reasoning parser or tool parser configuration.
import { getChatTemplate, parseQwen3Output, pivotToTemplateMessages, pivotToTemplateTools, type ChatTemplate } from "../../tokenizer/index.ts";
import { PolarError } from "../../../protocol/errors.ts";
import type { PivotRequest, PivotResponse } from "../pivot.ts";
import type { EngineCall, EngineResult } from "./backend.ts";
import { callNotes, usageOf } from "./capture.ts";
import { EngineBackend } from "./engine-backend.ts";
import type { EngineClient } from "./engine-client.ts";
import { finishReasonOf, stopSequenceOf } from "./openai-chat.ts";
import type { TitoEngine } from "./options.ts";
import { sglangGenerate, vllmCompletions, type TokenEngine } from "./tito-engines.ts";
import { TokenSpliceCache } from "./token-splice.ts";
import type { CacheBudget } from "../../cache-budget.ts";

const TOKEN_ENGINES: Record<TitoEngine, TokenEngine> = { vllm: vllmCompletions, sglang: sglangGenerate };

export interface TitoOptions {
  engine: TitoEngine;
  tokenSplice: boolean;
  /** Model folder for node/tokenizer (default: the bundled Qwen3 tokenizer + template). */
  tokenizer?: string;
  servedModel?: string;
  maxSessions: number;
  /** Backend name reported in `name` (the sglang backend in `/generate` mode is a tito backend). */
  name?: string;
}

export class TitoBackend extends EngineBackend {
  readonly name: string;
  private readonly template: ChatTemplate;
  private readonly engine: TokenEngine;
  private readonly splices: TokenSpliceCache | undefined;
  private contextLength: Promise<number | undefined> | undefined;

  constructor(
    client: EngineClient,
    private readonly options: TitoOptions,
  ) {
    super(client);
    this.name = options.name ?? "tito";
    this.template = getChatTemplate(options.tokenizer);
    this.engine = TOKEN_ENGINES[options.engine];
    this.splices = options.tokenSplice ? new TokenSpliceCache(options.maxSessions) : undefined;
  }

  async complete(call: EngineCall): Promise<EngineResult> {
    const { request, sessionId } = call;
    const tokenizer = this.template.tokenizer;
    const encode = (text: string) => tokenizer.encode(text);
    const { promptIds, spliced } = this.prompt(request, sessionId, encode);
    const contextLength = this.options.engine === "sglang" ? await this.engineContextLength(call.signal) : undefined;
    const completion = await this.engine(this.client, {
      sessionId,
      signal: call.signal,
      model: this.options.servedModel ?? request.model,
      promptIds,
      sampling: request.sampling,
      defaultMaxTokens: contextLength === undefined ? undefined : Math.max(1, contextLength - promptIds.length),
    });

    const parseToolCalls = request.tools.length > 0 && request.tool_choice !== "none";
    const parsed = parseQwen3Output(completion.text, { parseToolCalls });
    const toolCalls = parsed.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    const finishReason = finishReasonOf(completion.finishReason, toolCalls.length > 0, completion.finishMessage);
    const stopSequence = stopSequenceOf(finishReason, completion.matchedStop);
    const response: PivotResponse = {
      id: completion.id ?? `chatcmpl-${crypto.randomUUID()}`,
      model: request.model,
      content: parsed.content,
      ...(parsed.reasoning !== undefined && { reasoning: parsed.reasoning }),
      tool_calls: toolCalls,
      finish_reason: finishReason,
      ...(stopSequence !== undefined && { stop_sequence: stopSequence }),
      usage: usageOf(completion.capture, undefined),
    };
    const capture = completion.capture;
    if (this.splices && !("problem" in capture)) {
      this.splices.remember(sessionId, response, { text: tokenizer.decode(capture.outputIds), ids: capture.outputIds }, encode);
    }
    const notes = callNotes(completion.attempts, capture, {
      ...(parsed.toolParseError !== undefined && { tool_call_parse_error: parsed.toolParseError }),
      ...(spliced && { token_splice: spliced.stats }),
    });
    return { response, tokens: "problem" in capture ? null : capture, engineUrl: completion.engineUrl, ...(notes && { notes }) };
  }

  /** Exact prompt length: the same render and tokenization the call would send (without splice). */
  async countTokens(request: PivotRequest): Promise<number> {
    return this.template.tokenizer.encode(this.render(request)).length;
  }

  override forgetSession(sessionId: string): void {
    super.forgetSession(sessionId);
    this.splices?.forget(sessionId);
  }

  override shareCacheBudget(budget: CacheBudget): void {
    super.shareCacheBudget(budget);
    this.splices?.shareCacheBudget(budget);
  }

  /**
   * SGLang's `/generate` defaults max_new_tokens to 128 and rejects prompt + max_new_tokens beyond
   * its context, so an unset limit becomes "the rest of the context": the engine's
   * `max_model_len` from `GET /v1/models` (SGLang's ModelCard carries it), else the tokenizer's.
   */
  private engineContextLength(signal: AbortSignal): Promise<number | undefined> {
    this.contextLength ??= this.client
      .models(signal)
      .then((models) => models[0]?.maxModelLen ?? this.template.tokenizer.folder.modelMaxLength)
      .catch(() => {
        this.contextLength = undefined;
        return this.template.tokenizer.folder.modelMaxLength;
      });
    return this.contextLength;
  }

  /**
   * The prompt ids (token-spliced when on). Input the template or tokenizer cannot take (a schema
   * nested thousands deep, a megabyte-long word) is the request's fault, as an engine's 400 is.
   */
  private prompt(request: PivotRequest, sessionId: string, encode: (text: string) => number[]) {
    try {
      const promptText = this.render(request);
      const spliced = this.splices?.splice(sessionId, request.messages, promptText, encode);
      return { promptIds: spliced?.ids ?? encode(promptText), spliced };
    } catch (err) {
      throw new PolarError("bad_request", "the chat template or tokenizer could not process the request", undefined, { cause: err });
    }
  }

  private render(request: PivotRequest): string {
    return this.template.render(pivotToTemplateMessages(request.messages), {
      tools: pivotToTemplateTools(request.tools),
      ...(request.thinking !== undefined && { enableThinking: request.thinking }),
    });
  }
}
