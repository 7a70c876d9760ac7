// Why: the vLLM and SGLang backends both send OpenAI chat bodies whose message JSON is reused
// across a session's calls (ChatBodyJson) and parse answers whose prompt ids extend the session's
// previous ones (PromptIdsJson); those caches, and forgetting them with the session and charging
// them to the gateway's byte budget, are held here once.
import type { CacheBudget } from "../../cache-budget.ts";
import { ChatBodyJson } from "./chat-body-json.ts";
import type { EngineClient } from "./engine-client.ts";
import { EngineBackend } from "./engine-backend.ts";
import { PromptIdsJson, type PromptIdsHolder } from "./prompt-ids-json.ts";

export abstract class ChatEngineBackend extends EngineBackend {
  /** The engine body's message JSON, reused across a session's calls. */
  protected readonly bodyJson = new ChatBodyJson();
  /** The engine answer's parser, reusing the session's previous prompt ids. */
  protected readonly answerJson: PromptIdsJson;

  constructor(client: EngineClient, promptIdsHolder: PromptIdsHolder) {
    super(client);
    this.answerJson = new PromptIdsJson(promptIdsHolder);
  }

  override forgetSession(sessionId: string): void {
    super.forgetSession(sessionId);
    this.bodyJson.forget(sessionId);
    this.answerJson.forget(sessionId);
  }

  override shareCacheBudget(budget: CacheBudget): void {
    super.shareCacheBudget(budget);
    this.bodyJson.shareCacheBudget(budget);
    this.answerJson.shareCacheBudget(budget);
  }
}
