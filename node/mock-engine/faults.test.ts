import { describe, expect, test } from "bun:test";
import { parseMockEngineArgs } from "./cli.ts";
import { startMockEngine } from "./server.ts";
import { buildShellArguments } from "./shell-args.ts";

const chat = (url: string, signal?: AbortSignal) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    signal,
  });

describe("injected faults", () => {
  test("--fail-first N answers HTTP 500 to the first N calls, then serves", async () => {
    const engine = await startMockEngine({ port: 0, failFirst: 2 });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await chat(engine.url)).status);
      expect(statuses).toEqual([500, 500, 200]);
      const body = (await (await chat(engine.url)).json()) as any;
      expect(body.choices[0].finish_reason).toBe("stop");
      expect(engine.calls).toBe(4);
    } finally {
      await engine.stop();
    }
  });

  test("the injected 500 has vLLM's error shape", async () => {
    const engine = await startMockEngine({ port: 0, failFirst: 1 });
    try {
      const res = await chat(engine.url);
      const body = (await res.json()) as any;
      expect(body.error.type).toBe("InternalServerError");
      expect(body.error.code).toBe(500);
    } finally {
      await engine.stop();
    }
  });

  test("--hang-calls: that call never answers (client timeout), the next one does", async () => {
    const engine = await startMockEngine({ port: 0, hangCalls: [1] });
    try {
      const err = await chat(engine.url, AbortSignal.timeout(300)).catch((e: unknown) => e);
      expect((err as Error).name).toBe("TimeoutError");
      expect((await chat(engine.url)).status).toBe(200);
      expect(engine.calls).toBe(2);
    } finally {
      await engine.stop();
    }
  });
});

describe("CLI flags and shell arguments", () => {
  test("flags map onto options", () => {
    expect(parseMockEngineArgs(["--port", "0", "--dialect", "sglang", "--hang-calls", "2,5", "--fail-first", "1", "--max-model-len", "1024"])).toEqual({
      port: 0,
      dialect: "sglang",
      hangCalls: [2, 5],
      failFirst: 1,
      maxModelLen: 1024,
    });
    expect(parseMockEngineArgs(["--help"])).toBeNull();
    expect(() => parseMockEngineArgs(["--dialect", "tgi"])).toThrow();
  });

  test("shell arguments follow each harness's schema", () => {
    const cmd = "echo hi";
    expect(buildShellArguments({ name: "exec_command", parameters: { properties: { cmd: { type: "string" } }, required: ["cmd"] } }, cmd)).toEqual({ cmd });
    expect(buildShellArguments({ name: "shell", parameters: { properties: { command: { type: "array" } }, required: ["command"] } }, cmd)).toEqual({
      command: ["bash", "-lc", cmd],
    });
    expect(
      buildShellArguments(
        {
          name: "run_shell_command",
          parameters: {
            properties: { command: { type: "string" }, description: { type: "string" }, directory: { type: "string" } },
            required: ["command", "description"],
          },
        },
        cmd,
      ),
    ).toEqual({ command: cmd, description: "Run: echo hi" });
    expect(
      buildShellArguments(
        { name: "bash", parameters: { properties: { command: { type: "string" }, timeout: { type: "number" } }, required: ["command", "timeout"] } },
        cmd,
      ),
    ).toEqual({ command: cmd, timeout: 60000 });
  });
});
