// Why: vLLM's /tokenize and /detokenize (also served by SGLang): the exact prompt ids a chat
// would get, so clients (and our tests) can check prompt_token_ids against the engine.
import { z } from "zod";
import { ChatCompletionRequest, renderOptions, templateMessages } from "./chat-request.ts";
import type { EngineContext } from "./context.ts";
import { EngineError } from "./engine-error.ts";
import { checkModel, parseBody } from "./request.ts";

const TokenizeCompletion = z.object({ model: z.string().optional(), prompt: z.string(), return_token_strs: z.boolean().nullable().optional() }).passthrough();
const DetokenizeRequest = z.object({ model: z.string().optional(), tokens: z.array(z.number().int()) }).passthrough();

const tokenStringTables = new WeakMap<object, Map<number, string>>();

/** HF `convert_ids_to_tokens`: the byte-level spelling of each id. */
function tokenStrings(ctx: EngineContext, ids: number[]): string[] {
  const folder = ctx.model.tokenizer.folder;
  let table = tokenStringTables.get(folder);
  if (!table) {
    table = new Map(Object.entries(folder.vocab).map(([s, id]) => [id, s]));
    for (const t of folder.addedTokens) table.set(t.id, t.content);
    tokenStringTables.set(folder, table);
  }
  return ids.map((id) => table.get(id) ?? "");
}

export function tokenize(ctx: EngineContext, body: unknown): Response {
  const isChat = typeof body === "object" && body !== null && "messages" in body;
  let tokens: number[];
  let wantStrs = false;
  if (isChat) {
    const request = parseBody(ChatCompletionRequest, body);
    checkModel(ctx, request.model);
    tokens = ctx.model.renderChat(templateMessages(request), renderOptions(request)).ids;
    wantStrs = (body as { return_token_strs?: unknown }).return_token_strs === true;
  } else {
    const request = parseBody(TokenizeCompletion, body);
    checkModel(ctx, request.model);
    tokens = ctx.model.encode(request.prompt);
    wantStrs = request.return_token_strs === true;
  }
  return Response.json({
    count: tokens.length,
    max_model_len: ctx.options.maxModelLen,
    tokens,
    token_strs: wantStrs ? tokenStrings(ctx, tokens) : null,
  });
}

export function detokenize(ctx: EngineContext, body: unknown): Response {
  const request = parseBody(DetokenizeRequest, body);
  checkModel(ctx, request.model);
  try {
    return Response.json({ prompt: ctx.model.tokenizer.decode(request.tokens) });
  } catch (err) {
    throw new EngineError("bad_request", (err as Error).message, "tokens");
  }
}
