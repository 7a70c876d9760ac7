// Why: the vLLM and SGLang backends both send OpenAI chat bodies whose message JSON is reused
// across a session's calls (ChatBodyJson); that cache, and forgetting it with the session and
// charging it to the gateway's byte budget, is held here once.
import type { CacheBudget } from "../../cache-budget.ts";
import { ChatBodyJson } from "./chat-body-json.ts";
import { EngineBackend } from "./engine-backend.ts";

export abstract class ChatEngineBackend extends EngineBackend {
  /** The engine body's message JSON, reused across a session's calls. */
  protected readonly bodyJson = new ChatBodyJson();

  override forgetSession(sessionId: string): void {
    super.forgetSession(sessionId);
    this.bodyJson.forget(sessionId);
  }

  override shareCacheBudget(budget: CacheBudget): void {
    super.shareCacheBudget(budget);
    this.bodyJson.shareCacheBudget(budget);
  }
}
