// The files and environment each adapter writes, checked without the CLIs installed.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { claudeEnv } from "./claude-code.ts";
import { pinnedBinary, PINNED_CLIS, pinnedVersion } from "./common.ts";
import { HARNESS_KINDS, getHarness } from "./registry.ts";
import { HarnessOptions, type HarnessLaunch, type HarnessSpec } from "./types.ts";

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function makeSpec(overrides: Partial<HarnessSpec> = {}): Promise<HarnessSpec> {
  const root = await mkdtemp(join(tmpdir(), "polar-adapter-"));
  roots.push(root);
  return {
    workDir: join(root, "work"),
    homeDir: join(root, "home"),
    installDir: join(root, "install"),
    model: "Qwen/Qwen3-0.6B",
    instruction: "Create out.txt",
    gateway: { openaiBaseUrl: "http://127.0.0.1:9/s/abc/v1", anthropicBaseUrl: "http://127.0.0.1:9/s/abc", token: "sess-token" },
    limits: { timeoutMs: 60_000 },
    ...overrides,
  };
}

/** A config file the adapter asks the runner to write (adapters write nothing themselves). */
const fileOf = (launch: HarnessLaunch, path: string): string => {
  const content = launch.files[path];
  if (content === undefined) throw new Error(`no file ${path} in ${Object.keys(launch.files).join(", ")}`);
  return content;
};
const jsonOf = (launch: HarnessLaunch, path: string): unknown => JSON.parse(fileOf(launch, path));

describe("registry", () => {
  test("every kind resolves to an adapter of that kind", () => {
    for (const kind of HARNESS_KINDS) expect(getHarness(kind).kind).toBe(kind);
  });
  test("an unknown kind is a bad_request", () => {
    expect(() => getHarness("emacs")).toThrow(PolarError);
  });
  test("adapters refuse invalid options", async () => {
    const spec = await makeSpec({ options: { maxRetries: -1 } });
    await expect(getHarness("codex").prepare(spec)).rejects.toThrow(PolarError);
  });
  test("options are strict", () => {
    expect(HarnessOptions.safeParse({ dialect: "chat" }).success).toBe(true);
    expect(HarnessOptions.safeParse({ dialekt: "chat" }).success).toBe(false);
    expect(HarnessOptions.safeParse({ dialect: "grpc" }).success).toBe(false);
  });
});

describe("pins", () => {
  test("exact versions and the install script's layout", () => {
    for (const cli of PINNED_CLIS) {
      const pin = pinnedVersion(cli);
      expect(pin.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(pinnedBinary(cli, "/opt/h")).toBe(`/opt/h/${cli}@${pin.version}/node_modules/.bin/${pin.bin}`);
    }
  });
});

describe("codex", () => {
  test("config.toml: custom Responses provider, bounded retries, side channels off", async () => {
    const spec = await makeSpec({ options: { maxRetries: 2 } });
    const launch = await getHarness("codex").prepare(spec);
    expect(launch.env.CODEX_HOME).toBe(join(spec.homeDir, ".codex"));
    const config = Bun.TOML.parse(fileOf(launch, join(spec.homeDir, ".codex", "config.toml"))) as Record<string, any>;
    expect(config.model).toBe(spec.model);
    expect(config.model_provider).toBe("polar");
    expect(config.approval_policy).toBe("never");
    expect(config.sandbox_mode).toBe("danger-full-access");
    expect(config.check_for_update_on_startup).toBe(false);
    expect(config.web_search).toBe("disabled");
    const provider = config.model_providers.polar;
    expect(provider.base_url).toBe(spec.gateway.openaiBaseUrl);
    expect(provider.wire_api).toBe("responses");
    expect(provider.request_max_retries).toBe(2);
    expect(provider.stream_max_retries).toBe(2);
    expect(launch.env[provider.env_key]).toBe("sess-token");
    expect(config.features).toMatchObject({ plugins: false, remote_plugin: false, apps: false });
    expect(config.analytics.enabled).toBe(false);
    expect(config.agents.enabled).toBe(false);
    expect(launch.command[0]).toBe(pinnedBinary("codex", spec.installDir));
    expect(launch.command.slice(1, 4)).toEqual(["exec", "--ephemeral", "--skip-git-repo-check"]);
    expect(launch.command.at(-1)).toBe("Create out.txt");
    expect(launch.stdin).toBe("closed");
  });

  test("a declared context window reaches codex", async () => {
    const spec = await makeSpec({ options: { contextWindow: 40960 } });
    const launch = await getHarness("codex").prepare(spec);
    const config = Bun.TOML.parse(fileOf(launch, join(spec.homeDir, ".codex", "config.toml"))) as Record<string, unknown>;
    expect(config.model_context_window).toBe(40960);
  });

  test("strings with quotes, newlines and DEL survive TOML", async () => {
    const model = 'we"ird\nmodel\\\x7f';
    const spec = await makeSpec({ model });
    const launch = await getHarness("codex").prepare(spec);
    const config = Bun.TOML.parse(fileOf(launch, join(spec.homeDir, ".codex", "config.toml"))) as Record<string, unknown>;
    expect(config.model).toBe(model);
  });

  test("an instruction that looks like a flag stays a prompt", async () => {
    const launch = await getHarness("codex").prepare(await makeSpec({ instruction: "--help me" }));
    expect(launch.command.at(-1)).toBe(" --help me");
  });
});

describe("claude-code", () => {
  test("env points at the gateway, cuts nonessential traffic, bounds retries", async () => {
    const spec = await makeSpec({ limits: { timeoutMs: 1000, maxTurns: 7 } });
    const launch = await getHarness("claude-code").prepare(spec);
    expect(launch.env).toMatchObject({
      ANTHROPIC_BASE_URL: spec.gateway.anthropicBaseUrl,
      ANTHROPIC_API_KEY: "sess-token",
      CLAUDE_CONFIG_DIR: join(spec.homeDir, ".claude"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_MAX_RETRIES: "1",
    });
    const argv = launch.command;
    expect(argv[argv.indexOf("--permission-mode") + 1]).toBe("bypassPermissions");
    expect(argv[argv.indexOf("--model") + 1]).toBe(spec.model);
    expect(argv[argv.indexOf("--max-turns") + 1]).toBe("7");
  });
  test("the output cap goes to CLAUDE_CODE_MAX_OUTPUT_TOKENS only when set", async () => {
    expect(claudeEnv(await makeSpec({ options: { maxOutputTokens: 4096 } }), false).CLAUDE_CODE_MAX_OUTPUT_TOKENS).toBe("4096");
    expect(claudeEnv(await makeSpec(), false).CLAUDE_CODE_MAX_OUTPUT_TOKENS).toBeUndefined();
  });
  test("the context window goes to CLAUDE_CODE_MAX_CONTEXT_TOKENS only when set", async () => {
    expect(claudeEnv(await makeSpec({ options: { contextWindow: 40960 } }), false).CLAUDE_CODE_MAX_CONTEXT_TOKENS).toBe("40960");
    expect(claudeEnv(await makeSpec(), false).CLAUDE_CODE_MAX_CONTEXT_TOKENS).toBeUndefined();
  });
  test("adapters write nothing themselves: config comes back as files for the runner", async () => {
    const spec = await makeSpec();
    for (const kind of ["codex", "qwen-code", "pi", "mini"]) {
      const launch = await getHarness(kind).prepare(spec);
      expect(Object.keys(launch.files).length).toBeGreaterThan(0);
      for (const path of Object.keys(launch.files)) expect(path.startsWith(`${spec.homeDir}/`)).toBe(true);
    }
    expect(existsSync(spec.homeDir)).toBe(false);
  });
  test("inside a sandbox IS_SANDBOX is set whatever the host user", async () => {
    const launch = await getHarness("claude-code").prepare(await makeSpec({ inSandbox: true }));
    expect(launch.env.IS_SANDBOX).toBe("1");
    expect(launch.dirs).toEqual([expect.stringMatching(/\/\.claude$/)]);
  });
  test("IS_SANDBOX only as root", async () => {
    const spec = await makeSpec();
    expect(claudeEnv(spec, true).IS_SANDBOX).toBe("1");
    expect(claudeEnv(spec, false).IS_SANDBOX).toBeUndefined();
  });
});

describe("qwen-code", () => {
  test("chat by default, private settings with telemetry and statistics off", async () => {
    const spec = await makeSpec();
    const launch = await getHarness("qwen-code").prepare(spec);
    expect(jsonOf(launch, join(spec.homeDir, ".qwen", "settings.json"))).toEqual({
      general: { enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      model: { generationConfig: { maxRetries: 1 } },
    });
    expect(launch.env).toMatchObject({
      QWEN_HOME: join(spec.homeDir, ".qwen"),
      OPENAI_BASE_URL: spec.gateway.openaiBaseUrl,
      OPENAI_API_KEY: "sess-token",
      OPENAI_MODEL: spec.model,
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    });
    const argv = launch.command;
    expect(argv[argv.indexOf("--auth-type") + 1]).toBe("openai");
    expect(argv[argv.indexOf("--approval-mode") + 1]).toBe("yolo");
  });
  test("output cap, context window and retries go to generationConfig", async () => {
    const spec = await makeSpec({ options: { maxOutputTokens: 4096, contextWindow: 40960, maxRetries: 0 } });
    const launch = await getHarness("qwen-code").prepare(spec);
    const settings = jsonOf(launch, join(spec.homeDir, ".qwen", "settings.json")) as any;
    expect(settings.model.generationConfig).toEqual({ maxRetries: 0, contextWindowSize: 40960, samplingParams: { max_tokens: 4096 } });
  });
  test("responses and anthropic are selectable", async () => {
    const responses = await getHarness("qwen-code").prepare(await makeSpec({ options: { dialect: "responses" } }));
    expect(responses.command[responses.command.indexOf("--auth-type") + 1]).toBe("openai-responses");
    const spec = await makeSpec({ options: { dialect: "anthropic" } });
    const anthropic = await getHarness("qwen-code").prepare(spec);
    expect(anthropic.command[anthropic.command.indexOf("--auth-type") + 1]).toBe("anthropic");
    expect(anthropic.env.ANTHROPIC_BASE_URL).toBe(spec.gateway.anthropicBaseUrl);
    expect(anthropic.env.OPENAI_BASE_URL).toBeUndefined();
  });
});

describe("pi", () => {
  test("models.json declares the gateway provider; offline, no session", async () => {
    const spec = await makeSpec();
    const launch = await getHarness("pi").prepare(spec);
    const agentDir = join(spec.homeDir, ".pi", "agent");
    expect(launch.env).toMatchObject({ PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" });
    const models = jsonOf(launch, join(agentDir, "models.json")) as any;
    const provider = models.providers.polar;
    expect(provider.api).toBe("openai-completions");
    expect(provider.baseUrl).toBe(spec.gateway.openaiBaseUrl);
    expect(launch.env[provider.apiKey]).toBe("sess-token");
    expect(provider.models[0].id).toBe(spec.model);
    const settings = jsonOf(launch, join(agentDir, "settings.json")) as any;
    expect(settings.retry.maxRetries).toBe(1);
    expect(settings.enableInstallTelemetry).toBe(false);
    for (const flag of ["-p", "--offline", "--no-session"]) expect(launch.command).toContain(flag);
    expect(launch.command[launch.command.indexOf("--provider") + 1]).toBe("polar");
  });
  test("anthropic dialect uses the anthropic base URL; '@' is not a file", async () => {
    const spec = await makeSpec({ options: { dialect: "anthropic" }, instruction: "@README.md summarize" });
    const launch = await getHarness("pi").prepare(spec);
    const models = jsonOf(launch, join(spec.homeDir, ".pi", "agent", "models.json")) as any;
    expect(models.providers.polar.api).toBe("anthropic-messages");
    expect(models.providers.polar.baseUrl).toBe(spec.gateway.anthropicBaseUrl);
    expect(launch.command.at(-1)).toBe(" @README.md summarize");
  });
});

describe("mini", () => {
  test("config.json carries the run; the key stays in the environment", async () => {
    const spec = await makeSpec({ limits: { timeoutMs: 1000, maxTurns: 4 }, options: { commandTimeoutMs: 5000 } });
    const launch = await getHarness("mini").prepare(spec);
    const configPath = launch.command.at(-1)!;
    const config = jsonOf(launch, configPath) as Record<string, unknown>;
    expect(config).toEqual({
      base_url: spec.gateway.openaiBaseUrl,
      model: spec.model,
      instruction: spec.instruction,
      work_dir: spec.workDir,
      max_turns: 4,
      command_timeout_ms: 5000,
      max_retries: 1,
    });
    expect(JSON.stringify(config)).not.toContain("sess-token");
    expect(launch.env.OPENAI_API_KEY).toBe("sess-token");
    expect(launch.command[0]).toBe(process.execPath);
    expect(launch.command[1]).toBe(join(spec.homeDir, ".mini", "agent.ts"));
    expect(fileOf(launch, launch.command[1]!)).toStartWith("#!/usr/bin/env bun");
  });
  test("bunPath says where bun is where mini runs", async () => {
    const launch = await getHarness("mini").prepare(await makeSpec({ bunPath: "/polar/node/bin/bun" }));
    expect(launch.command[0]).toBe("/polar/node/bin/bun");
  });
});

describe("command", () => {
  test("needs argv; sets the four standard variables and POLAR_*", async () => {
    await expect(getHarness("command").prepare(await makeSpec())).rejects.toThrow(PolarError);
    const spec = await makeSpec({ options: { argv: ["my-agent", "--fast"] }, limits: { timeoutMs: 5, maxTurns: 3 } });
    const launch = await getHarness("command").prepare(spec);
    expect(launch.command).toEqual(["my-agent", "--fast"]);
    expect(launch.env).toMatchObject({
      OPENAI_BASE_URL: spec.gateway.openaiBaseUrl,
      OPENAI_API_KEY: "sess-token",
      ANTHROPIC_BASE_URL: spec.gateway.anthropicBaseUrl,
      ANTHROPIC_API_KEY: "sess-token",
      POLAR_MODEL: spec.model,
      POLAR_INSTRUCTION: spec.instruction,
      POLAR_MAX_TURNS: "3",
    });
  });
});
