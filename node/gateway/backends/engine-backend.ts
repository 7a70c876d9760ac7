// Why: every backend that reaches its engines through an EngineClient lists models and forgets a
// closed session the same way; this base class holds that once, so each backend only says how it
// completes a call (and adds to the shared part where it keeps more, e.g. token-splice state).
import type { CacheBudget } from "../../cache-budget.ts";
import type { Backend, EngineCall, EngineResult } from "./backend.ts";
import type { EngineClient } from "./engine-client.ts";

export abstract class EngineBackend implements Backend {
  abstract readonly name: string;

  constructor(protected readonly client: EngineClient) {}

  abstract complete(call: EngineCall): Promise<EngineResult>;

  async listModels(): Promise<string[]> {
    return (await this.client.models()).map((m) => m.id);
  }

  forgetSession(sessionId: string): void {
    this.client.pool.forget(sessionId);
  }

  shareCacheBudget(budget: CacheBudget): void {
    this.client.pool.shareCacheBudget(budget);
  }
}
