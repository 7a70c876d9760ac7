// Why: one contract between "how a harness is configured" (adapters) and "where it runs" (the
// host runner, the sandbox runner). An adapter only describes config files and a command, with
// paths as seen where the harness runs; it never writes or spawns anything, so every runner can
// reuse every adapter (the host runner writes the files to disk, the sandbox runner into the
// sandbox).
import { z } from "zod";
import { DIALECTS, type Dialect } from "../../protocol/calls.ts";

/** The API a harness speaks: the gateway's dialects. */
export const HARNESS_DIALECTS = DIALECTS;
export type HarnessDialect = Dialect;

/** Where the harness sends its LLM calls: one gateway session. */
export interface GatewayEndpoint {
  /** OpenAI-style base URL including `/v1` (clients append `/chat/completions`, `/responses`). */
  openaiBaseUrl: string;
  /** Anthropic-style base URL without `/v1` (clients append `/v1/messages`). */
  anthropicBaseUrl: string;
  /** The session token, given to the harness as its API key. */
  token: string;
}

export interface HarnessLimits {
  /** Wall-clock limit of the whole harness process; the runner kills its process group after it. */
  timeoutMs: number;
  /** Agent turns (LLM calls), passed to harnesses that have such a setting. */
  maxTurns?: number;
}

/**
 * Per-harness knobs, parsed with zod because they arrive from trainers over the wire.
 * Each adapter reads only the fields that mean something to it.
 */
export const HarnessOptions = z
  .object({
    /** API dialect for harnesses that speak several (qwen-code, pi). */
    dialect: z.enum(HARNESS_DIALECTS).optional(),
    /** Bounded LLM-call retries inside the harness (codex, claude-code, pi). */
    maxRetries: z.number().int().min(0).max(10).optional(),
    /** The program and its arguments, for the `command` harness. */
    argv: z.array(z.string()).min(1).optional(),
    /** Extra arguments appended to the harness command line. */
    extraArgs: z.array(z.string()).optional(),
    /** Per-command timeout of the mini agent's bash tool. */
    commandTimeoutMs: z.number().int().positive().optional(),
    /** The model's context window, declared to harnesses that plan compaction with it (codex, qwen-code, pi, claude-code). */
    contextWindow: z.number().int().positive().optional(),
    /** Output-token cap per LLM call, for harnesses whose default would overflow the context
     * (claude-code asks for 32000, qwen-code for 32768). */
    maxOutputTokens: z.number().int().positive().optional(),
  })
  .strict();
export type HarnessOptions = z.infer<typeof HarnessOptions>;

/** Every path in a spec is a path where the harness runs (the host, or inside a sandbox). */
export interface HarnessSpec {
  /** The repository / task folder the agent works in (its cwd). */
  workDir: string;
  gateway: GatewayEndpoint;
  model: string;
  /** The task prompt given to the agent. */
  instruction: string;
  limits: HarnessLimits;
  /** A private, writable config folder for this run: the harness's HOME and config home. */
  homeDir: string;
  /** Folder written by scripts/install-harnesses.sh; defaults to defaultInstallDir(). */
  installDir?: string;
  /** The bun binary (for mini); defaults to the one running Polar. */
  bunPath?: string;
  /** The harness runs inside a Polar sandbox (CLIs that refuse "skip permissions" as root are told so). */
  inSandbox?: boolean;
  options?: HarnessOptions;
}

/** What to execute. The runner adds a minimal PATH/HOME/LANG; nothing else is inherited. */
export interface HarnessLaunch {
  command: string[];
  env: Record<string, string>;
  stdin: "closed";
  /** Private config files (path → content) the runner writes first, owner-only (0600). */
  files: Record<string, string>;
  /** Folders the runner creates first (owner-only), besides those holding `files`. */
  dirs: string[];
}

export interface HarnessExit {
  /** Null when the process was killed by a signal (timeout). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}

export interface HarnessOutcome {
  exitCode: number | null;
  /** The agent's final answer as the harness printed it. */
  finalOutput: string;
  error?: string;
}

export interface HarnessAdapter {
  readonly kind: string;
  /** Describes the harness's private config under spec.homeDir and its command. */
  prepare(spec: HarnessSpec): Promise<HarnessLaunch>;
  /** Reads the finished process's output. */
  collect(exit: HarnessExit): HarnessOutcome;
}
