// The real CLIs (Codex, Claude Code, Qwen Code, Pi) and Polar's mini agent, run unchanged on the
// host through the gateway against the mock engine. Each run must: really execute the scripted
// shell command; have every LLM call recorded with the engine's exact prompt tokens, sampled
// tokens and logprobs; and reach no host but 127.0.0.1 (a refusing proxy records every attempt
// through the proxy variables; strace records every connect(2) of the process tree).
// CLIs not installed (scripts/install-harnesses.sh) are skipped with a visible test name, unless
// POLAR_REQUIRE_HARNESSES=1 (CI), where a missing CLI fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedCall } from "../protocol/calls.ts";
import type { Dialect } from "../protocol/calls.ts";
import { getHarness, pinnedBinary, runOnHost, type HarnessKind, type PinnedCli } from "../node/harness/index.ts";
import { pivotToTemplateMessages, pivotToTemplateTools, renderChatIds } from "../node/tokenizer/index.ts";
import { startStack, type Stack } from "./helpers/stack.ts";

const FILE_CONTENT = "polar-harness-ok";
const SCRIPT = { steps: [{ shell: `printf ${FILE_CONTENT} > out.txt` }, { text: "Done." }] };
const INSTRUCTION = `Create a file out.txt containing ${FILE_CONTENT} using the shell, then say Done.`;
const MODEL = "Qwen/Qwen3-8B";
const MAX_MODEL_LEN = 40960;
const RUN_TIMEOUT_MS = 240_000;
const STRACE = Bun.which("strace");
const REQUIRE_ALL = process.env.POLAR_REQUIRE_HARNESSES === "1";

interface Case {
  kind: HarnessKind;
  cli: PinnedCli | null;
  dialect: Dialect;
  /** Set for harnesses that speak several dialects: the non-default ones are chosen by option. */
  option?: Dialect;
}
const CASES: Case[] = [
  { kind: "mini", cli: null, dialect: "chat" },
  { kind: "pi", cli: "pi", dialect: "chat" },
  { kind: "pi", cli: "pi", dialect: "responses", option: "responses" },
  { kind: "pi", cli: "pi", dialect: "anthropic", option: "anthropic" },
  { kind: "qwen-code", cli: "qwen-code", dialect: "chat" },
  { kind: "qwen-code", cli: "qwen-code", dialect: "responses", option: "responses" },
  { kind: "qwen-code", cli: "qwen-code", dialect: "anthropic", option: "anthropic" },
  { kind: "codex", cli: "codex", dialect: "responses" },
  { kind: "claude-code", cli: "claude-code", dialect: "anthropic" },
];

// ---- a proxy that refuses everything and remembers what was asked -------------------------

interface RefusingProxy {
  url: string;
  attempts: string[];
  stop(): Promise<void>;
}

async function startRefusingProxy(): Promise<RefusingProxy> {
  const attempts: string[] = [];
  const server: Server = createServer((socket) => {
    socket.once("data", (chunk) => {
      attempts.push(chunk.toString("latin1").split("\r\n")[0] ?? "");
      socket.end("HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("proxy has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    attempts,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function proxyEnv(proxyUrl: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"]) {
    env[name] = proxyUrl;
    env[name.toLowerCase()] = proxyUrl;
  }
  env.NO_PROXY = env.no_proxy = "127.0.0.1,localhost";
  return env;
}

// ---- strace: every connect(2) of the process tree -----------------------------------------

/** How many connect(2) calls reached 127.0.0.1:port (proves strace saw the harness's calls). */
function loopbackConnectsTo(straceLog: string, port: number): number {
  return straceLog.split("\n").filter((line) => line.includes(`htons(${port})`) && line.includes('inet_addr("127.0.0.1")')).length;
}

/** Addresses of connect(2) calls that are neither loopback nor a unix socket. */
function nonLocalConnects(straceLog: string): string[] {
  const outside: string[] = [];
  for (const line of straceLog.split("\n")) {
    if (!line.includes("connect(")) continue;
    const family = /sa_family=(AF_[A-Z0-9]+)/.exec(line)?.[1];
    if (family === "AF_UNIX" || family === "AF_NETLINK") continue;
    if (family === "AF_INET") {
      const addr = /inet_addr\("([^"]+)"\)/.exec(line)?.[1];
      if (addr === "127.0.0.1") continue;
    }
    if (family === "AF_INET6") {
      const addr = /inet_pton\(AF_INET6, "([^"]+)"/.exec(line)?.[1];
      if (addr === "::1" || addr === "::ffff:127.0.0.1") continue;
    }
    outside.push(line.trim());
  }
  return outside;
}

// ---- what the engine did, independently of the gateway ------------------------------------

/** The prompt ids of a recorded request, rendered by our Qwen3 template (proven equal to vLLM's). */
function expectedPromptIds(call: RecordedCall): number[] {
  return renderChatIds(pivotToTemplateMessages(call.request.messages), {
    tools: call.request.tools.length > 0 ? pivotToTemplateTools(call.request.tools) : undefined,
    ...(call.request.thinking === undefined ? {} : { enableThinking: call.request.thinking }),
  });
}

/** Replays a recorded call directly on the (deterministic) engine and returns its tokens. */
async function engineTokens(engineUrl: string, call: RecordedCall): Promise<{ promptIds: number[]; outputIds: number[]; logprobs: number[] }> {
  const messages = call.request.messages.map((m) => ({
    role: m.role,
    content: m.content,
    ...(m.reasoning === undefined ? {} : { reasoning_content: m.reasoning }),
    ...(m.tool_calls && m.tool_calls.length > 0
      ? { tool_calls: m.tool_calls.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } })) }
      : {}),
    ...(m.tool_call_id === undefined ? {} : { tool_call_id: m.tool_call_id }),
  }));
  const tools = call.request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
  const sampling = call.request.sampling;
  const response = await fetch(`${engineUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: call.request.model,
      messages,
      ...(tools.length > 0 ? { tools } : {}),
      ...(sampling.max_tokens === undefined ? {} : { max_tokens: sampling.max_tokens }),
      ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
      ...(call.request.thinking === undefined ? {} : { chat_template_kwargs: { enable_thinking: call.request.thinking } }),
      logprobs: true,
      top_logprobs: 0,
      return_token_ids: true,
    }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as {
    prompt_token_ids: number[];
    choices: { token_ids: number[]; logprobs: { content: { logprob: number }[] } }[];
  };
  const choice = body.choices[0]!;
  return { promptIds: body.prompt_token_ids, outputIds: choice.token_ids, logprobs: choice.logprobs.content.map((c) => c.logprob) };
}

// ---- the runs ------------------------------------------------------------------------------

let stack: Stack;
const roots: string[] = [];
const timings: Record<string, number> = {};

beforeAll(async () => {
  stack = await startStack({ engine: { script: SCRIPT, model: MODEL, maxModelLen: MAX_MODEL_LEN } });
}, 120_000); // the engine loads a real tokenizer: slow on a loaded machine
afterAll(async () => {
  await stack?.stop();
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
  if (Object.keys(timings).length > 0) console.log(`harness run times (ms): ${JSON.stringify(timings)}`);
});

function installed(c: Case): boolean {
  return c.cli === null || existsSync(pinnedBinary(c.cli));
}

describe("real harnesses through the gateway", () => {
  for (const c of CASES) {
    const missing = !installed(c);
    const label = c.option ? `${c.kind} (${c.option})` : c.kind;
    const name = `${label} runs the scripted task offline, every call recorded token-exact`;
    if (missing && !REQUIRE_ALL) {
      test.skip(`${name} [SKIPPED: ${c.cli} not installed — run scripts/install-harnesses.sh]`, () => {});
      continue;
    }
    test(
      name,
      async () => {
        expect(missing ? `${c.cli} is not installed at ${pinnedBinary(c.cli!)}` : "installed").toBe("installed");
        const root = await mkdtemp(join(tmpdir(), `polar-${c.kind}-`));
        roots.push(root);
        const workDir = join(root, "work");
        await mkdir(workDir);
        const session = await stack.session({ harness: c.kind });
        const proxy = await startRefusingProxy();
        const straceLog = join(root, "strace.log");
        try {
          const result = await runOnHost(
            getHarness(c.kind),
            {
              workDir,
              homeDir: join(root, "home"),
              model: MODEL,
              instruction: INSTRUCTION,
              gateway: { openaiBaseUrl: session.openai_base_url, anthropicBaseUrl: session.anthropic_base_url, token: session.token },
              limits: { timeoutMs: RUN_TIMEOUT_MS, maxTurns: 10 },
              // Claude Code and Qwen Code ask for 32K output tokens by default: more than fits
              // next to their ~12-17K-token prompts in the mock's 40960-token context. (Declaring
              // contextWindow 40960 would make Qwen Code compact its ~17K-token first turn.)
              options: { maxOutputTokens: 4096, ...(c.option ? { dialect: c.option } : {}) },
            },
            {
              extraEnv: proxyEnv(proxy.url),
              ...(STRACE ? { prefix: [STRACE, "-f", "-qq", "-e", "trace=connect", "-o", straceLog] } : {}),
            },
          );
          timings[label] = result.durationMs;
          if (result.exitCode !== 0) console.error(`${label} stderr:\n${result.stderr.slice(-3000)}`);
          expect(result.error).toBeUndefined();
          expect(result.exitCode).toBe(0);
          expect(result.finalOutput).toContain("Done.");

          // The tool really ran, in the work dir.
          expect(await readFile(join(workDir, "out.txt"), "utf8")).toBe(FILE_CONTENT);

          // Every call recorded: the tool call, then the final answer, with exact tokens.
          const calls = await stack.calls(session.id);
          expect(calls.length).toBe(2);
          expect(calls.map((call) => call.seq)).toEqual([0, 1]);
          for (const call of calls) {
            expect(call.error).toBeNull();
            expect(call.dialect).toBe(c.dialect);
            expect(call.prompt_ids).toEqual(expectedPromptIds(call));
            const engine = await engineTokens(stack.engineUrl, call);
            expect(call.prompt_ids).toEqual(engine.promptIds);
            expect(call.output_ids).toEqual(engine.outputIds);
            expect(call.logprobs).toEqual(engine.logprobs);
          }
          expect(calls[0]!.response!.tool_calls.length).toBe(1);
          expect(calls[0]!.response!.tool_calls[0]!.arguments).toContain(FILE_CONTENT);
          expect(calls[1]!.response!.content.trim()).toBe("Done.");
          // The tool result of the first call is in the second prompt.
          expect(calls[1]!.request.messages.some((m) => m.role === "tool")).toBe(true);

          // Nothing left 127.0.0.1.
          expect(proxy.attempts).toEqual([]);
          if (STRACE) {
            const log = await readFile(straceLog, "utf8");
            expect(loopbackConnectsTo(log, Number(new URL(stack.gateway.url).port))).toBeGreaterThan(0);
            expect(nonLocalConnects(log)).toEqual([]);
          }
        } finally {
          await proxy.stop();
        }
      },
      RUN_TIMEOUT_MS + 30_000,
    );
  }
  if (!STRACE) test.skip("strace connect check [SKIPPED: strace not installed; the proxy check still ran]", () => {});
});

describe("the outbound checks can fail", () => {
  test("the proxy records a CONNECT and strace parsing flags outside addresses", async () => {
    const proxy = await startRefusingProxy();
    try {
      await fetch("https://example.invalid/", { proxy: proxy.url }).catch(() => undefined);
      expect(proxy.attempts).toEqual(["CONNECT example.invalid:443 HTTP/1.1"]);
    } finally {
      await proxy.stop();
    }
    const log = [
      '1 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT',
      '1 connect(5, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
      '2 connect(7, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.2")}, 16) = 0',
    ].join("\n");
    expect(nonLocalConnects(log)).toEqual([log.split("\n")[2]!]);
  });
});

describe("mini agent limits", () => {
  async function runMini(script: { steps: { shell?: string; text?: string }[] }, maxTurns: number, commandTimeoutMs: number) {
    const miniStack = await startStack({ engine: { script, model: MODEL } });
    const root = await mkdtemp(join(tmpdir(), "polar-mini-"));
    roots.push(root);
    const workDir = join(root, "work");
    await mkdir(workDir);
    try {
      const session = await miniStack.session();
      const result = await runOnHost(getHarness("mini"), {
        workDir,
        homeDir: join(root, "home"),
        model: MODEL,
        instruction: "Work.",
        gateway: { openaiBaseUrl: session.openai_base_url, anthropicBaseUrl: session.anthropic_base_url, token: session.token },
        limits: { timeoutMs: 60_000, maxTurns },
        options: { commandTimeoutMs },
      });
      return { result, calls: await miniStack.calls(session.id), workDir };
    } finally {
      await miniStack.stop();
    }
  }

  test("stops after maxTurns without a final answer", async () => {
    const { result, calls } = await runMini({ steps: [{ shell: "true" }, { shell: "true" }, { shell: "true" }] }, 2, 10_000);
    expect(result.exitCode).toBe(3);
    expect(result.error).toContain("reached max turns (2)");
    expect(calls.length).toBe(2);
  });

  test("a command past its timeout is killed and reported to the model", async () => {
    const { result, calls, workDir } = await runMini({ steps: [{ shell: "sleep 30; echo late > late.txt" }, { text: "Done." }] }, 5, 300);
    expect(result.exitCode).toBe(0);
    const toolMessage = calls[1]!.request.messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toStartWith("timed out after 300 ms");
    expect(existsSync(join(workDir, "late.txt"))).toBe(false);
  });
});
