// Why: the pieces every adapter shares — where the pinned CLIs live, the POLAR_* variables, and
// how a finished process becomes an outcome — kept in one place so adapters stay declarative.
import { homedir } from "node:os";
import { join } from "node:path";
import pins from "./pins.json" with { type: "json" };
import { PolarError } from "../../protocol/errors.ts";
import { HarnessOptions, type HarnessExit, type HarnessOutcome, type HarnessSpec } from "./types.ts";

export type PinnedCli = keyof typeof pins;
export const PINNED_CLIS = Object.keys(pins) as PinnedCli[];

export function pinnedVersion(cli: PinnedCli): { package: string; version: string; bin: string } {
  return pins[cli];
}

/** The cache folder scripts/install-harnesses.sh installs into by default. */
export function defaultInstallDir(): string {
  return process.env.POLAR_HARNESS_DIR || join(homedir(), ".cache", "polar", "harnesses");
}

/** `<installDir>/<name>@<version>/node_modules/.bin/<bin>`, the layout of install-harnesses.sh. */
export function pinnedBinary(cli: PinnedCli, installDir: string = defaultInstallDir()): string {
  const pin = pins[cli];
  return join(installDir, `${cli}@${pin.version}`, "node_modules", ".bin", pin.bin);
}

export function specBinary(cli: PinnedCli, spec: HarnessSpec): string {
  return pinnedBinary(cli, spec.installDir ?? defaultInstallDir());
}

/** Variables every harness gets, so wrappers and custom commands can read the run's setup. */
export function polarEnv(spec: HarnessSpec): Record<string, string> {
  const env: Record<string, string> = {
    POLAR_MODEL: spec.model,
    POLAR_INSTRUCTION: spec.instruction,
    POLAR_WORK_DIR: spec.workDir,
    POLAR_HOME: spec.homeDir,
    POLAR_OPENAI_BASE_URL: spec.gateway.openaiBaseUrl,
    POLAR_ANTHROPIC_BASE_URL: spec.gateway.anthropicBaseUrl,
    POLAR_API_KEY: spec.gateway.token,
    POLAR_TIMEOUT_MS: String(spec.limits.timeoutMs),
  };
  if (spec.limits.maxTurns !== undefined) env.POLAR_MAX_TURNS = String(spec.limits.maxTurns);
  return env;
}

/** The run's options, validated here too: they may come straight from a trainer's request. */
export function options(spec: HarnessSpec): HarnessOptions {
  const parsed = HarnessOptions.safeParse(spec.options ?? {});
  if (!parsed.success) throw new PolarError("bad_request", `invalid harness options: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * LLM-call retries inside the harness: one, so a transient gateway error is survived but a dead
 * engine fails the rollout in seconds instead of minutes of backoff (see docs/harnesses.md).
 */
export const DEFAULT_HARNESS_MAX_RETRIES = 1;

export function maxRetries(spec: HarnessSpec): number {
  return options(spec).maxRetries ?? DEFAULT_HARNESS_MAX_RETRIES;
}

/** Root cannot use some "skip permissions" modes unless the CLI is told it runs in a sandbox. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

const ERROR_TAIL_CHARS = 1000;

const tail = (text: string) => text.trim().slice(-ERROR_TAIL_CHARS);

/** For CLIs that print the final answer on stdout and progress/errors on stderr. */
export function collectStdout(exit: HarnessExit): HarnessOutcome {
  const finalOutput = exit.stdout.trim();
  if (exit.timedOut) return { exitCode: exit.exitCode, finalOutput, error: "harness timed out" };
  if (exit.exitCode === 0) return { exitCode: 0, finalOutput };
  // Some CLIs print API errors on stdout (claude -p), most on stderr: keep the end of both.
  const detail = [tail(exit.stdout) && `stdout: ${tail(exit.stdout)}`, tail(exit.stderr) && `stderr: ${tail(exit.stderr)}`].filter(Boolean).join("\n");
  const how = exit.exitCode === null ? "a signal" : `code ${exit.exitCode}`;
  return { exitCode: exit.exitCode, finalOutput, error: `harness exited with ${how}${detail ? `\n${detail}` : ""}` };
}
