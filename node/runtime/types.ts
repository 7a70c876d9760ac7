// Why: one sandbox contract between "where code runs" (docker via dockerode, process via bwrap)
// and everything that runs code there (prepare actions, harnesses, evaluators, the pipeline).
import type { RuntimeBackend, RuntimeSpec } from "../../protocol/runtime.ts";
import type { SandboxPolicy } from "./sandbox-policy.ts";

export { PrepareAction, RuntimeSpec, RuntimeBackend, RUNTIME_BACKENDS, NETWORK_MODES } from "../../protocol/runtime.ts";

export interface ExecRequest {
  /** argv, or a shell string run with `/bin/sh -c`. */
  command: string[] | string;
  cwd?: string;
  env?: Record<string, string>;
  /** Bytes written to stdin (then closed); stdin is closed at once otherwise. */
  stdin?: string | Uint8Array;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Bytes of stdout and of stderr kept; the rest is counted in `*_dropped_bytes`. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  /** Null when killed (timeout, abort). */
  exit_code: number | null;
  stdout: string;
  stderr: string;
  stdout_dropped_bytes: number;
  stderr_dropped_bytes: number;
  timed_out: boolean;
  duration_ms: number;
}

/** Where a sandbox sees its private run folder (Sandbox.hostRunDir). */
export const SANDBOX_RUN_DIR = "/polar/run";
/** Where a sandbox sees, read-only, the folder holding its rollout's gateway socket (Sandbox.hostGatewayDir). */
export const SANDBOX_GATEWAY_DIR = "/polar/gateway";
/** The rollout's gateway socket's name in that folder. */
export const GATEWAY_SOCKET_NAME = "gateway.sock";
export const SANDBOX_GATEWAY_SOCKET = `${SANDBOX_GATEWAY_DIR}/${GATEWAY_SOCKET_NAME}`;
/** Where the node's installed harness CLIs and a Node.js runtime are mounted read-only. */
export const SANDBOX_HARNESS_DIR = "/polar/harnesses";
export const SANDBOX_NODE_DIR = "/polar/node";

/** A host path made visible inside the sandbox. */
export interface Mount {
  host: string;
  sandbox: string;
  readonly: boolean;
}

export interface SandboxCreateOptions {
  spec: RuntimeSpec;
  /** Labels every container / work dir (node id, rollout id) so leftovers can be found. */
  labels: { node_id: string; rollout_id?: string };
  mounts?: Mount[];
}

export interface Sandbox {
  readonly id: string;
  readonly backend: RuntimeBackend;
  readonly spec: RuntimeSpec;
  /** A host folder private to this sandbox, mounted read-write at SANDBOX_RUN_DIR inside it. */
  readonly hostRunDir: string;
  /**
   * A host folder private to this sandbox that only the node writes, mounted read-only at
   * SANDBOX_GATEWAY_DIR inside it. Prewarmed sandboxes exist before their rollout does, so the
   * rollout's gateway unix socket is created here later (bind mounts cannot be added to a running
   * container) — never in a folder the sandbox can write, where a planted symlink would turn the
   * node's unlink, bind and chmod on a host path of the sandbox's choosing.
   */
  readonly hostGatewayDir: string;
  /**
   * False when commands run as plain host processes (the process runtime without bwrap): sandbox
   * paths then mean nothing to them, so harnesses must run with runOnHost instead.
   */
  readonly isolated?: boolean;
  /**
   * What the node's operator lets tasks ask of this sandbox (set by its runtime): prepare reads
   * upload sources only inside its host-path roots. Absent (a stand-in): no host path is read.
   */
  readonly policy?: SandboxPolicy;
  exec(request: ExecRequest): Promise<ExecResult>;
  /** Writes files (path → content) inside the sandbox, creating folders. */
  putFiles(files: Record<string, string | Uint8Array>, options?: { mode?: number }): Promise<void>;
  /** Copies a host folder to `sandboxPath`. */
  putDirectory(hostDir: string, sandboxPath: string): Promise<void>;
  /** Extracts a tar archive at `sandboxPath`. */
  putArchive(tar: Uint8Array, sandboxPath: string): Promise<void>;
  readFile(sandboxPath: string): Promise<Uint8Array>;
  /** A tar archive of `sandboxPath`. */
  getArchive(sandboxPath: string): Promise<Uint8Array>;
  /** True while the sandbox can still run commands (a container killed from outside is not). */
  alive(): Promise<boolean>;
  /** Stops and removes the sandbox and its work dir; idempotent. */
  destroy(): Promise<void>;
}

export interface SandboxRuntime {
  readonly backend: RuntimeBackend;
  /** Whether this runtime isolates (bwrap present, docker always); the demo warns when not. */
  readonly isolated: boolean;
  create(options: SandboxCreateOptions): Promise<Sandbox>;
  /** Removes every sandbox labelled with this node id (leftovers of an earlier life). */
  removeLeftovers(nodeId: string): Promise<number>;
}

/** What the pool reports, for metrics and the node's heartbeat. */
export type PoolEvent =
  | { type: "started"; key: string; sandbox_id: string; duration_ms: number }
  | { type: "taken"; key: string; sandbox_id: string; warm: boolean; duration_ms: number }
  | { type: "failed"; key: string; error: string; duration_ms: number }
  | { type: "destroyed"; key: string; sandbox_id: string; reason: string; duration_ms: number };

/**
 * Prewarmed sandboxes per image (and runtime options). A sandbox is handed out once and never
 * reused; `release` destroys it. Targets follow demand (queued rollouts per image).
 */
export interface SandboxPool {
  /** A warm sandbox for this spec if one is ready (checked alive), else one started now. */
  take(spec: RuntimeSpec, labels: { rollout_id: string }, signal?: AbortSignal): Promise<Sandbox>;
  release(sandbox: Sandbox): Promise<void>;
  /** Queued demand for a spec: the pool keeps up to this many (capped) ready. */
  setDemand(spec: RuntimeSpec, queued: number): void;
  /** Ready sandboxes per pool key (for heartbeats). */
  warm(): Record<string, number>;
  onEvent(listener: (event: PoolEvent) => void): () => void;
  /** Destroys everything it holds (shutdown, SIGTERM). */
  close(): Promise<void>;
}
