#!/usr/bin/env bun
// Why: Polar's own reference harness — the smallest honest coding agent: one system prompt, one
// `bash` tool, a loop over OpenAI Chat Completions until the model answers without a tool call.
// It imports nothing (only Bun), so it can be copied into any sandbox image that has `bun`.
// Usage: bun agent.ts <config.json>; the API key comes from $OPENAI_API_KEY.
// Exit codes: 0 final answer printed on stdout, 2 bad config, 3 max turns reached, 4 API error.

interface MiniConfig {
  baseUrl: string;
  model: string;
  instruction: string;
  workDir: string;
  maxTurns: number;
  commandTimeoutMs: number;
  maxRetries: number;
  /** Sent as max_tokens when set; otherwise the server's default applies. */
  maxTokens?: number;
}

interface ToolCall {
  id: string;
  function: { name: string; arguments: string };
}
interface AssistantMessage {
  content: string | null;
  tool_calls?: ToolCall[];
}
type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: { id: string; type: "function"; function: ToolCall["function"] }[] }
  | { role: "tool"; tool_call_id: string; content: string };

const SYSTEM_PROMPT = `You are a coding agent working in the directory {workDir}.
Use the bash tool to inspect and change files and to run commands. Each call runs in a fresh
bash process started in that directory. When the task is done, reply with a short final answer
and no tool call.`;

const BASH_TOOL = {
  type: "function",
  function: {
    name: "bash",
    description: "Run a bash command in the working directory and return its exit code and output.",
    parameters: {
      type: "object",
      properties: { command: { type: "string", description: "The bash command to run." } },
      required: ["command"],
    },
  },
} as const;

const OUTPUT_LIMIT_CHARS = 10_000;

function fail(code: number, message: string): never {
  process.stderr.write(`mini: ${message}\n`);
  process.exit(code);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readConfig(path: string | undefined): Promise<MiniConfig> {
  if (!path) fail(2, "usage: agent.ts <config.json>");
  const raw: unknown = await Bun.file(path).json();
  if (!isRecord(raw)) fail(2, "config is not an object");
  const str = (key: string) => (typeof raw[key] === "string" ? (raw[key] as string) : fail(2, `config.${key} must be a string`));
  const int = (key: string) =>
    Number.isInteger(raw[key]) && (raw[key] as number) >= 0 ? (raw[key] as number) : fail(2, `config.${key} must be an integer >= 0`);
  return {
    baseUrl: str("base_url").replace(/\/+$/, ""),
    model: str("model"),
    instruction: str("instruction"),
    workDir: str("work_dir"),
    maxTurns: int("max_turns"),
    commandTimeoutMs: int("command_timeout_ms"),
    maxRetries: int("max_retries"),
    ...(raw.max_tokens === undefined ? {} : { maxTokens: int("max_tokens") }),
  };
}

/** Parses the one part of a Chat Completions response the loop uses: choices[0].message. */
function parseAssistant(body: unknown): AssistantMessage {
  const choice = isRecord(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(message)) throw new Error("response has no choices[0].message");
  const content = typeof message.content === "string" ? message.content : null;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls = calls.map((call): ToolCall => {
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || typeof call.id !== "string" || !isRecord(fn) || typeof fn.name !== "string") {
      throw new Error("malformed tool call in response");
    }
    return { id: call.id, function: { name: fn.name, arguments: typeof fn.arguments === "string" ? fn.arguments : "{}" } };
  });
  return toolCalls.length > 0 ? { content, tool_calls: toolCalls } : { content };
}

/** First pause before a retry; doubles each time (a gateway restart takes about a second). */
const RETRY_BACKOFF_MS = 500;

async function complete(config: MiniConfig, messages: Message[]): Promise<AssistantMessage> {
  let lastError = "";
  for (let attempt = 0; attempt <= config.maxRetries; attempt++) {
    if (attempt > 0) await Bun.sleep(RETRY_BACKOFF_MS * 2 ** (attempt - 1));
    try {
      const response = await fetch(`${config.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
        body: JSON.stringify({
          model: config.model,
          messages,
          tools: [BASH_TOOL],
          stream: false,
          ...(config.maxTokens === undefined ? {} : { max_tokens: config.maxTokens }),
        }),
      });
      const text = await response.text();
      if (response.ok) return parseAssistant(JSON.parse(text));
      lastError = `HTTP ${response.status}: ${text.slice(0, 500)}`;
      if (response.status < 500 && response.status !== 429) break; // not retryable
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }
  fail(4, `API error: ${lastError}`);
}

async function runBash(command: string, config: MiniConfig): Promise<string> {
  const child = Bun.spawn(["bash", "-c", command], {
    cwd: config.workDir,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  }, config.commandTimeoutMs);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  const output = (stdout + stderr).slice(0, OUTPUT_LIMIT_CHARS);
  const status = timedOut ? `timed out after ${config.commandTimeoutMs} ms` : `exit code: ${exitCode}`;
  return `${status}\n${output}`;
}

async function toolResult(call: ToolCall, config: MiniConfig): Promise<string> {
  if (call.function.name !== "bash") return `error: unknown tool ${call.function.name}; the only tool is bash`;
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    return "error: tool arguments are not valid JSON";
  }
  if (!isRecord(args) || typeof args.command !== "string") return 'error: expected arguments {"command": string}';
  return runBash(args.command, config);
}

async function main(): Promise<void> {
  const config = await readConfig(process.argv[2]);
  const messages: Message[] = [
    { role: "system", content: SYSTEM_PROMPT.replace("{workDir}", config.workDir) },
    { role: "user", content: config.instruction },
  ];
  for (let turn = 0; turn < config.maxTurns; turn++) {
    const reply = await complete(config, messages);
    const calls = reply.tool_calls ?? [];
    messages.push({
      role: "assistant",
      content: reply.content,
      ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ id: call.id, type: "function" as const, function: call.function })) } : {}),
    });
    if (calls.length === 0) {
      process.stdout.write(`${(reply.content ?? "").trim()}\n`);
      return;
    }
    for (const call of calls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: await toolResult(call, config) });
    }
  }
  fail(3, `reached max turns (${config.maxTurns}) without a final answer`);
}

await main();
export {};
