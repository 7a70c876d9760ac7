// Why: the one place that turns a runtime's name into a running SandboxRuntime, used by `polar
// node`, `polar demo` and `polar tasks validate`. Each runtime's module (and its libraries) is
// imported only when that runtime is chosen: the process runtime never loads dockerode, whose
// dependency tree carries native addons Bun cannot load on every machine.
import { PolarError } from "../../protocol/errors.ts";
import type { SandboxLimits } from "./sandbox-limits.ts";
import type { SandboxPolicy } from "./sandbox-policy.ts";
import { RUNTIME_BACKENDS, type RuntimeBackend, type SandboxRuntime } from "./types.ts";

export { RUNTIME_BACKENDS, type RuntimeBackend };

/** The runtime of `polar node`, `demo`, `generate` and `tasks import` when none is named (needs only bwrap). */
export const DEFAULT_RUNTIME: RuntimeBackend = "process";

export interface OpenRuntimeOptions {
  /** What requests may ask of a sandbox (host paths, network, capabilities); the runtime's default otherwise. */
  policy?: SandboxPolicy;
  /** Per-sandbox disk and process limits; the runtime's default otherwise. */
  limits?: SandboxLimits;
  /** Images a Docker engine must already have (the demo's bundled image); default none. */
  images?: string[];
  /**
   * Whether a process runtime without bwrap may be used (commands then run as plain host
   * processes). Harnesses refuse such sandboxes, so `polar node` and `polar demo` say no;
   * `polar tasks validate` (evaluation only) says yes and warns once.
   */
  allowUnisolated?: boolean;
}

interface RuntimeEntry {
  /** One line for help texts. */
  summary: string;
  open(options: OpenRuntimeOptions): Promise<SandboxRuntime>;
}

/** The apt package and the setup script that install bwrap, named in every message about it. */
export const BWRAP_HINT = "install bubblewrap (apt-get install bubblewrap, or run `bash scripts/setup.sh` as root)";

/**
 * Why bwrap cannot create a sandbox on this machine (no user namespaces; a container whose masked
 * /proc keeps it from mounting one), or null: bwrap with the process runtime's namespaces and a
 * fresh /proc, on `true` — once, before any rollout would fail on it.
 */
function bwrapFailure(bwrap: string): string | null {
  const run = Bun.spawnSync(
    [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "true"],
    { stdout: "ignore", stderr: "pipe" },
  );
  return run.exitCode === 0 ? null : run.stderr.toString().trim() || `exit ${run.exitCode}`;
}

const RUNTIMES: Record<RuntimeBackend, RuntimeEntry> = {
  process: {
    summary: "process (each sandbox under bwrap on this host)",
    async open(options) {
      const [{ createProcessRuntime }, { findBwrap }] = await Promise.all([import("./process/process.ts"), import("./process/bwrap.ts")]);
      const bwrap = findBwrap();
      if (bwrap === null && !options.allowUnisolated) {
        throw new PolarError("bad_request", `the process runtime needs bwrap, which is not installed: ${BWRAP_HINT}; or use --runtime docker`);
      }
      const failure = bwrap === null ? null : bwrapFailure(bwrap);
      if (failure !== null) {
        throw new PolarError(
          "bad_request",
          `bwrap cannot create a sandbox on this machine (${failure}): run \`bash scripts/setup.sh\` as root (in a container it mounts the unmasked /proc bwrap needs), allow unprivileged user namespaces, or use --runtime docker`,
        );
      }
      return createProcessRuntime({ ...(options.policy ? { policy: options.policy } : {}), ...(options.limits ? { limits: options.limits } : {}) });
    },
  },
  docker: {
    summary: "docker (a Docker engine at DOCKER_HOST or the default socket)",
    async open(options) {
      const { probeDocker } = await import("./docker/docker-probe.ts");
      const probe = await probeDocker(options.images ?? []);
      if (!probe.ok) throw new PolarError("bad_request", `the docker runtime cannot start: ${probe.reason}`);
      const { createDockerRuntime } = await import("./docker/docker.ts");
      return createDockerRuntime({
        docker: probe.docker,
        ...(options.policy ? { policy: options.policy } : {}),
        ...(options.limits ? { limits: options.limits } : {}),
      });
    },
  },
};

/** "process | docker", for flag help. */
export function runtimeChoices(): string {
  return RUNTIME_BACKENDS.join(" | ");
}

/** Each runtime and what it needs, for flag help. */
export function runtimeHelp(): string {
  return RUNTIME_BACKENDS.map((name) => RUNTIMES[name].summary).join("; ");
}

/** The named runtime, ready to create sandboxes; a PolarError naming what is missing when it cannot run here. */
export async function openRuntime(name: RuntimeBackend, options: OpenRuntimeOptions = {}): Promise<SandboxRuntime> {
  return RUNTIMES[name].open(options);
}
