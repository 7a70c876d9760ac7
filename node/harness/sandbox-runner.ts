// Why: runs any adapter inside a Sandbox. Its config goes into a private home inside the
// sandbox, the CLIs come from the read-only harness mounts, and with no network the harness
// reaches its gateway session only through the loopback bridge: started in the same exec, it
// listens on 127.0.0.1 inside and forwards to the rollout's unix socket in the sandbox's
// read-only gateway folder.
import { join } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { SANDBOX_GATEWAY_SOCKET, SANDBOX_HARNESS_DIR, SANDBOX_NODE_DIR, SANDBOX_RUN_DIR, type Sandbox } from "../runtime/types.ts";
import { SANDBOX_BUN_BIN, SANDBOX_NODE_BIN } from "./sandbox-mounts.ts";
import type { GatewayEndpoint, HarnessAdapter, HarnessExit, HarnessLimits, HarnessOptions, HarnessOutcome, HarnessSpec } from "./types.ts";

/** The harness's private HOME inside the sandbox. */
export const SANDBOX_HOME_DIR = "/polar/home";
/** Where the bridge listens inside the sandbox (its own network namespace: always free). */
export const DEFAULT_BRIDGE_PORT = 39131;
const BRIDGE_SCRIPT = join(import.meta.dir, "bridge", "bridge.mjs");
const SANDBOX_BRIDGE_SCRIPT = `${SANDBOX_RUN_DIR}/bridge.mjs`;
const SANDBOX_PATH = [`${SANDBOX_NODE_DIR}/bin`, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(":");

/** Where the rollout's gateway socket must be opened on the host (SessionService.open({ socketFolder })). */
export function gatewaySocketFolder(sandbox: Sandbox): string {
  return sandbox.hostGatewayDir;
}

export interface SandboxHarnessRun {
  sandbox: Sandbox;
  adapter: HarnessAdapter;
  /** The rollout's session: its token, and the gateway's TCP URLs (used with `network: "host"`). */
  session: GatewayEndpoint;
  model: string;
  instruction: string;
  limits: HarnessLimits;
  options?: HarnessOptions;
  /** The agent's cwd inside the sandbox; default the sandbox's workdir. */
  workDir?: string;
  signal?: AbortSignal;
  /** Argv run before the bridge and harness inside the sandbox (e.g. strace). */
  prefix?: string[];
  extraEnv?: Record<string, string>;
  bridgePort?: number;
  maxOutputBytes?: number;
}

export interface SandboxRunResult extends HarnessOutcome {
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The OpenAI-style base URL the harness was given. */
  baseUrl: string;
  /** Whether the harness went through the loopback bridge (false with `network: "host"`). */
  bridged: boolean;
}

export async function runInSandbox(run: SandboxHarnessRun): Promise<SandboxRunResult> {
  const { sandbox } = run;
  if (sandbox.isolated === false) {
    throw new PolarError("bad_request", `sandbox ${sandbox.id} is not isolated (no bwrap): its commands see host paths, so run the harness with runOnHost`);
  }
  const bridged = sandbox.spec.network !== "host";
  const port = run.bridgePort ?? DEFAULT_BRIDGE_PORT;
  const gateway: GatewayEndpoint = bridged
    ? { openaiBaseUrl: `http://127.0.0.1:${port}/v1`, anthropicBaseUrl: `http://127.0.0.1:${port}`, token: run.session.token }
    : run.session;
  const spec: HarnessSpec = {
    workDir: run.workDir ?? sandbox.spec.workdir,
    homeDir: SANDBOX_HOME_DIR,
    installDir: SANDBOX_HARNESS_DIR,
    bunPath: SANDBOX_BUN_BIN,
    inSandbox: true,
    gateway,
    model: run.model,
    instruction: run.instruction,
    limits: run.limits,
    ...(run.options ? { options: run.options } : {}),
  };
  const launch = await run.adapter.prepare(spec);
  // Owner-only folders first (putFiles would create them world-readable), then the config.
  const mkdir = await sandbox.exec({ command: ["mkdir", "-p", "-m", "700", "--", SANDBOX_HOME_DIR, ...launch.dirs], timeoutMs: 60_000 });
  if (mkdir.exit_code !== 0) throw new PolarError("internal", `cannot create the harness home in sandbox ${sandbox.id}: ${mkdir.stderr}`);
  await sandbox.putFiles(launch.files, { mode: 0o600 });
  if (bridged) await sandbox.putFiles({ [SANDBOX_BRIDGE_SCRIPT]: await Bun.file(BRIDGE_SCRIPT).text() }, { mode: 0o644 });

  const bridge = bridged ? [SANDBOX_NODE_BIN, SANDBOX_BRIDGE_SCRIPT, String(port), SANDBOX_GATEWAY_SOCKET, "--"] : [];
  const result = await sandbox.exec({
    command: [...(run.prefix ?? []), ...bridge, ...launch.command],
    cwd: spec.workDir,
    env: { PATH: SANDBOX_PATH, HOME: SANDBOX_HOME_DIR, LANG: "C.UTF-8", ...launch.env, ...run.extraEnv },
    timeoutMs: run.limits.timeoutMs,
    ...(run.signal ? { signal: run.signal } : {}),
    ...(run.maxOutputBytes === undefined ? {} : { maxOutputBytes: run.maxOutputBytes }),
  });
  const exit: HarnessExit = { exitCode: result.exit_code, stdout: result.stdout, stderr: result.stderr, timedOut: result.timed_out };
  return {
    ...run.adapter.collect(exit),
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: result.timed_out,
    durationMs: result.duration_ms,
    baseUrl: gateway.openaiBaseUrl,
    bridged,
  };
}
