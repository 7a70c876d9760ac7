// Why: trajectory tests and the bench need sessions recorded the real way — an OpenAI SDK client
// looping over tool calls through the gateway to the mock engine — with the harness behaviours
// that break traces (reasoning dropped or echoed, compaction, sub-agents, volatile system text).
import type OpenAI from "openai";
import type { Script } from "../../../node/mock-engine/script.ts";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const BASH: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "bash",
    description: "Run a shell command and return its output",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};

export interface GatewayAgentOptions {
  /** System text at call n (a function for per-call volatile headers). */
  system: string | ((call: number) => string);
  thinking?: boolean;
  /** Echo `reasoning_content` back in assistant messages (most harnesses do not). */
  keepReasoning?: boolean;
  /** Messages after the system message to start from (e.g. a compaction summary). */
  history?: ChatMessage[];
}

/** A minimal coding-agent loop (one bash tool) speaking Chat Completions to the gateway. */
export class GatewayAgent {
  readonly messages: ChatMessage[];
  private calls = 0;

  constructor(
    private readonly client: OpenAI,
    private readonly opts: GatewayAgentOptions,
  ) {
    this.messages = [{ role: "system", content: this.systemText() }, ...(opts.history ?? [])];
  }

  private systemText(): string {
    return typeof this.opts.system === "string" ? this.opts.system : this.opts.system(this.calls);
  }

  ask(text: string): this {
    this.messages.push({ role: "user", content: text });
    return this;
  }

  /** One LLM call (and its tool result); true when the model answered with text. */
  async step(): Promise<boolean> {
    this.messages[0] = { role: "system", content: this.systemText() };
    const body = {
      model: "fake-model",
      messages: this.messages,
      tools: [BASH],
      max_tokens: 512,
      ...(this.opts.thinking !== undefined ? { chat_template_kwargs: { enable_thinking: this.opts.thinking } } : {}),
    };
    const completion = await this.client.chat.completions.create(body as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    this.calls++;
    const message = completion.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning_content?: string };
    const toolCalls = message.tool_calls ?? [];
    this.messages.push({
      role: "assistant",
      content: message.content ?? "",
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      ...(this.opts.keepReasoning && message.reasoning_content ? { reasoning_content: message.reasoning_content } : {}),
    } as ChatMessage);
    for (const call of toolCalls) {
      const command = call.type === "function" ? call.function.arguments : "";
      this.messages.push({ role: "tool", tool_call_id: call.id, content: `$ ${command}\nok (call ${this.calls})` });
    }
    return toolCalls.length === 0;
  }

  async solve(text: string, maxCalls = 50): Promise<void> {
    this.ask(text);
    for (let i = 0; i < maxCalls; i++) if (await this.step()) return;
    throw new Error("agent did not finish");
  }
}

/** Mock engine script: per query, `toolTurns` shell calls then a text answer, `queries` times. */
export function loopScript(queries: number, toolTurns: number): Script {
  const steps: Script["steps"] = [];
  for (let q = 0; q < queries; q++) {
    for (let t = 0; t < toolTurns; t++)
      steps.push({ think: `Query ${q + 1}, step ${t + 1}: inspect the next file.`, shell: `cat src/part${q}_${t}.ts | head -n 40` });
    steps.push({ think: `Query ${q + 1} is complete; summarise.`, text: `Query ${q + 1} done: ${toolTurns} files inspected.` });
  }
  return { steps };
}
