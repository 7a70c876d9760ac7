// Why: the trajectory test and bench both need sessions recorded from the REAL harness CLIs
// (Pi, Qwen Code, Codex, Claude Code) driven by a scripted mock engine through the gateway; the
// run (private home, work dir, adapter settings a harness needs beyond the adapter's defaults,
// e.g. compaction) and the recording are built in one place.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedCall } from "../../protocol/calls.ts";
import { getHarness, pinnedBinary, runOnHost, type HarnessAdapter, type HarnessOptions, type HostRunResult, type PinnedCli } from "../../node/harness/index.ts";
import type { Stack } from "./stack.ts";

export const REAL_CLIS = ["pi", "qwen-code", "codex", "claude-code"] as const satisfies readonly PinnedCli[];
export type RealCli = (typeof REAL_CLIS)[number];

export const CLI_MODEL = "Qwen/Qwen3-8B";

export function cliInstalled(cli: RealCli): boolean {
  return existsSync(pinnedBinary(cli));
}

/** A mock-engine script of `n` shell steps (each writes one file), then the final answer. */
export function shellStepsScript(n: number, think = true): { steps: { think?: string; shell?: string; text?: string }[] } {
  const steps = Array.from({ length: n }, (_, i) => ({
    ...(think ? { think: `Step ${i + 1}: I need file f${i + 1}.txt, so I write it with the shell.` } : {}),
    shell: `printf 'line ${i + 1}' > f${i + 1}.txt`,
  }));
  return { steps: [...steps, { ...(think ? { think: "All files are written." } : {}), text: "Done." }] };
}

/** Settings merged into a harness's own JSON settings file after the adapter wrote it. */
export interface ExtraSettings {
  /** Path relative to the run's home dir, e.g. `.pi/agent/settings.json`. */
  file: string;
  merge: Record<string, unknown>;
}

function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    const bothObjects = [current, value].every((v) => v !== null && typeof v === "object" && !Array.isArray(v));
    out[key] = bothObjects ? deepMerge(current as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

/** The adapter, with `extra` merged into the settings file it writes (e.g. compaction knobs). */
function withExtraSettings(adapter: HarnessAdapter, extra: ExtraSettings | undefined): HarnessAdapter {
  if (!extra) return adapter;
  return {
    ...adapter,
    async prepare(spec) {
      const launch = await adapter.prepare(spec);
      const path = join(spec.homeDir, extra.file);
      const written = launch.files[path];
      const current = written === undefined ? {} : (JSON.parse(written) as Record<string, unknown>);
      return { ...launch, files: { ...launch.files, [path]: JSON.stringify(deepMerge(current, extra.merge), null, 2) } };
    },
  };
}

/** The real CLIs plus Polar's own mini agent (needs only Bun). */
export type RecordableHarness = RealCli | "mini";

export interface CliRunRequest {
  cli: RecordableHarness;
  instruction: string;
  options?: HarnessOptions;
  extraSettings?: ExtraSettings;
  maxTurns?: number;
  timeoutMs?: number;
}

export interface CliRecording {
  sessionId: string;
  calls: RecordedCall[];
  run: HostRunResult;
  /** Names of the files the agent left in its work dir (the dir itself is removed). */
  workFiles: string[];
}

/**
 * Runs one real CLI on the host against `stack`'s gateway (a fresh session) and returns the
 * session's recorded calls. The run's temporary folders are removed afterwards.
 */
export async function recordCliSession(stack: Stack, req: CliRunRequest): Promise<CliRecording> {
  const root = await mkdtemp(join(tmpdir(), `polar-traj-${req.cli}-`));
  const workDir = join(root, "work");
  await mkdir(workDir);
  try {
    const session = await stack.session({ harness: req.cli });
    const run = await runOnHost(withExtraSettings(getHarness(req.cli), req.extraSettings), {
      workDir,
      homeDir: join(root, "home"),
      model: CLI_MODEL,
      instruction: req.instruction,
      gateway: { openaiBaseUrl: session.openai_base_url, anthropicBaseUrl: session.anthropic_base_url, token: session.token },
      limits: { timeoutMs: req.timeoutMs ?? 240_000, maxTurns: req.maxTurns ?? 60 },
      // Claude Code and Qwen Code ask for 32K output tokens by default, more than fits next to
      // their prompts in the mock's 40960-token context.
      options: { maxOutputTokens: 4096, ...req.options },
    });
    return { sessionId: session.id, calls: await stack.calls(session.id), run, workFiles: (await readdir(workDir)).sort() };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
