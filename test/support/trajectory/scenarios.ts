// Why: each trajectory break cause as a small, realistic session (real Qwen3 template and
// tokenizer), shared by the unit tests and the bench so both measure the same situations.
import type { RecordedCall } from "../../../protocol/calls.ts";
import type { Message } from "../../../protocol/chat.ts";
import { assistantMessage, BASH_TOOL, ScriptedSession, toolResult, type SampledTurn } from "./qwen3.ts";

export const SYSTEM = "You are a careful coding agent. Use the bash tool to inspect and change files.";

export interface AgentOptions {
  /** Tool-loop turns per user query before the text answer. */
  toolTurns?: number;
  thinking?: boolean;
  /** Harness sends reasoning back (reasoning_content) in assistant messages. */
  keepReasoning?: boolean;
  /** System text at call n (volatile headers). */
  system?: (call: number) => string;
  /** Override what is sampled at call n. */
  sample?: (call: number, base: SampledTurn) => SampledTurn;
  /** Conversation to start from after the system message (e.g. a compaction summary). */
  history?: Message[];
  name?: string;
}

/** A scripted harness: per user query, `toolTurns` bash calls with tool results, then an answer. */
export class Agent {
  readonly messages: Message[];
  private calls = 0;
  private toolTurn = 0;
  private queries = 0;

  constructor(
    private readonly session: ScriptedSession,
    private readonly opts: AgentOptions = {},
  ) {
    this.messages = [{ role: "system", content: this.systemText() }, ...(opts.history ?? [])];
  }

  private systemText(): string {
    return this.opts.system ? this.opts.system(this.calls) : SYSTEM;
  }

  /** Add a user query (the next steps work on it). */
  ask(text?: string): this {
    this.queries++;
    this.toolTurn = 0;
    this.messages.push({ role: "user", content: text ?? `${this.opts.name ?? "Task"} ${this.queries}: make the tests in pkg${this.queries} pass.` });
    return this;
  }

  /** One LLM call; returns whether the query is answered. */
  step(): boolean {
    const toolTurns = this.opts.toolTurns ?? 2;
    const isAnswer = this.toolTurn >= toolTurns;
    const n = this.calls;
    this.messages[0] = { role: "system", content: this.systemText() };
    const base: SampledTurn = {
      think: `Call ${n}: I should ${isAnswer ? "summarise the work" : `inspect step ${this.toolTurn}`} for query ${this.queries}.`,
      ...(isAnswer
        ? { content: `Finished query ${this.queries}: all ${this.toolTurn} steps done.` }
        : { toolCalls: [{ name: "bash", arguments: { command: `ls pkg${this.queries}/step${this.toolTurn} && cat f${n}.txt` } }] }),
    };
    const response = this.session.call(
      { messages: [...this.messages], tools: [BASH_TOOL], thinking: this.opts.thinking },
      this.opts.sample ? this.opts.sample(n, base) : base,
    );
    this.calls++;
    this.messages.push(assistantMessage(response, this.opts.keepReasoning ?? false));
    if (isAnswer) return true;
    this.messages.push(toolResult(response, `output of call ${n}\nline two of ${this.toolTurn}`));
    this.toolTurn++;
    return false;
  }

  /** Ask and step until answered. */
  solve(text?: string): this {
    this.ask(text);
    while (!this.step());
    return this;
  }
}

function run(opts: AgentOptions, queries = 1): RecordedCall[] {
  const session = new ScriptedSession();
  const agent = new Agent(session, opts);
  for (let q = 0; q < queries; q++) agent.solve();
  return session.calls;
}

/** A clean tool loop: thinking on, reasoning sent back, one user query. */
export function cleanSession(toolTurns = 3): RecordedCall[] {
  return run({ toolTurns, thinking: true, keepReasoning: true });
}

/** Thinking on, harness drops reasoning; a second query strips it from history too. */
export function thinkingStripSession(): RecordedCall[] {
  return run({ toolTurns: 2, thinking: true, keepReasoning: false }, 2);
}

/** Thinking on, reasoning sent back: only the second user query strips earlier reasoning. */
export function laterQueryStripSession(): RecordedCall[] {
  return run({ toolTurns: 2, thinking: true, keepReasoning: true }, 2);
}

/** Thinking off: the generation prompt ends with `<think>\n\n</think>\n\n`, history lacks it. */
export function thinkingOffSession(): RecordedCall[] {
  return run({ toolTurns: 3, thinking: false });
}

export function billingHeader(call: number): string {
  return `x-anthropic-billing-header: cc_version=2.0.${call}.a1b; cch=${(call * 7919) % 10007};`;
}

/** A Claude Code style billing header in the system prompt that changes every call. */
export function volatileSystemSession(): RecordedCall[] {
  return run({ toolTurns: 3, thinking: true, keepReasoning: true, system: (n) => `${billingHeader(n)}\n${SYSTEM}` });
}

/** The model samples compact tool-call JSON; the template re-renders it with spaces. */
export function toolArgsDriftSession(): RecordedCall[] {
  return run({
    toolTurns: 3,
    thinking: true,
    keepReasoning: true,
    sample: (_n, base) => ({
      ...base,
      toolCalls: base.toolCalls?.map((tc) => ({ ...tc, argumentsText: JSON.stringify(tc.arguments) })),
    }),
  });
}

/** Call 1 was sampled with a non-canonical tokenization of its (identical) text. */
export function tokenizationDriftSession(): RecordedCall[] {
  return run({
    toolTurns: 2,
    thinking: true,
    keepReasoning: true,
    sample: (n, base) => {
      if (n !== 1) return base;
      const args = { command: "cat README.md" };
      const call = `<tool_call>\n{"name": "bash", "arguments": {"command": "cat README.md"}}\n</tool_call>`;
      return {
        think: "Let me read",
        content: "Reading",
        toolCalls: [{ name: "bash", arguments: args }],
        tokenPieces: ["<think>\nLet me read\n</think>\n\nRead", "ing", `\n${call}`],
      };
    },
  });
}

/** A query, then the harness compacts history into a summary and goes on. */
export function compactionSession(): RecordedCall[] {
  const session = new ScriptedSession();
  const opts: AgentOptions = { toolTurns: 2, thinking: true, keepReasoning: true };
  const first = new Agent(session, opts).solve();
  const summary: Message = { role: "user", content: `Summary of the work so far (${first.messages.length} messages): query 1 solved.` };
  new Agent(session, { ...opts, history: [summary] }).solve("Now also update the README.");
  return session.calls;
}

/** A main agent and a sub-agent (other system prompt) whose calls interleave in one session. */
export function subAgentSession(): RecordedCall[] {
  const session = new ScriptedSession();
  const main = new Agent(session, { toolTurns: 2, thinking: true, keepReasoning: true }).ask();
  const sub = new Agent(session, {
    toolTurns: 2,
    thinking: true,
    keepReasoning: true,
    name: "Search",
    system: () => "You are a search sub-agent. Find files and report paths only.",
  }).ask();
  main.step();
  sub.step();
  main.step();
  sub.step();
  sub.step();
  main.step();
  return session.calls;
}

/** A token-faithful session with a text-only side call (e.g. a title model behind `openai`). */
export function textOnlySession(): RecordedCall[] {
  const session = new ScriptedSession();
  const agent = new Agent(session, { toolTurns: 1, thinking: true, keepReasoning: true }).ask();
  agent.step();
  session.textOnlyCall({ messages: [{ role: "user", content: "Title for this chat?" }] }, "Fix tests");
  agent.step();
  return session.calls;
}
