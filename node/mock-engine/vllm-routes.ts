// Why: the HTTP surface of vLLM's OpenAI-compatible server that Polar uses, with vLLM's error
// body (`{error:{message,type,param,code}}`) for every failure.
import { Hono } from "hono";
import type { EngineContext } from "./context.ts";
import { asEngineError, vllmErrorBody } from "./engine-error.ts";
import { nowSeconds } from "./context.ts";
import { readJson } from "./request.ts";
import { detokenize, tokenize } from "./tokenize-routes.ts";
import { vllmChatCompletion } from "./vllm-chat.ts";
import { vllmCompletion } from "./vllm-completions.ts";

export function vllmApp(ctx: EngineContext): Hono {
  const app = new Hono();
  app.onError((err) => {
    const e = asEngineError(err);
    return Response.json(vllmErrorBody(e), { status: e.status });
  });
  app.get("/health", () => new Response(null, { status: 200 }));
  app.get("/v1/models", () =>
    Response.json({
      object: "list",
      data: [
        {
          id: ctx.options.model,
          object: "model",
          created: nowSeconds(),
          owned_by: "vllm",
          root: ctx.model.tokenizer.folder.path,
          parent: null,
          max_model_len: ctx.options.maxModelLen,
          permission: [],
        },
      ],
    }),
  );
  app.post("/v1/chat/completions", async (c) => vllmChatCompletion(ctx, await readJson(c.req.raw), c.req.raw.signal));
  app.post("/v1/completions", async (c) => vllmCompletion(ctx, await readJson(c.req.raw), c.req.raw.signal));
  app.post("/tokenize", async (c) => tokenize(ctx, await readJson(c.req.raw)));
  app.post("/detokenize", async (c) => detokenize(ctx, await readJson(c.req.raw)));
  return app;
}
