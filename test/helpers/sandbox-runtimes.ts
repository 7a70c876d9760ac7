// Why: the sandboxed-harness tests run the same cases on every runtime this machine has (bwrap,
// a Docker engine); this lists them, says visibly why one is missing, and lends the host's
// strace to a sandbox (on PATH under bwrap; bind-mounted with its libraries into a container).
import { realpathSync } from "node:fs";
import { basename } from "node:path";
import { findBwrap } from "../../node/runtime/process/bwrap.ts";
import { createDockerRuntime } from "../../node/runtime/docker/docker.ts";
import { probeDocker } from "../../node/runtime/docker/docker-probe.ts";
import { createProcessRuntime } from "../../node/runtime/process/process.ts";
import { RuntimeSpec, type Mount, type SandboxRuntime } from "../../node/runtime/types.ts";

export interface RuntimeCase {
  name: "process" | "docker";
  runtime: SandboxRuntime | null;
  /** Why `runtime` is null. */
  missing?: string;
  spec: RuntimeSpec;
}

const DOCKER_IMAGE = "polar-bookworm:dev";
const STRACE_DIR = "/polar/strace";

export async function sandboxRuntimes(): Promise<RuntimeCase[]> {
  const bwrap = findBwrap();
  const requireBwrap = process.env.POLAR_REQUIRE_BWRAP === "1" || process.env.POLAR_REQUIRE_HARNESSES === "1";
  const processCase: RuntimeCase = {
    name: "process",
    runtime: bwrap || requireBwrap ? createProcessRuntime({ warn: () => {} }) : null,
    missing: "bwrap not installed — apt-get install bubblewrap",
    spec: RuntimeSpec.parse({ backend: "process" }),
  };
  return [processCase, await dockerCase()];
}

async function dockerCase(): Promise<RuntimeCase> {
  const spec = RuntimeSpec.parse({ backend: "docker", image: DOCKER_IMAGE, cap_add: ["SYS_PTRACE"] });
  const probe = await probeDocker([DOCKER_IMAGE]);
  if (probe.ok) return { name: "docker", runtime: createDockerRuntime({ docker: probe.docker }), spec };
  // Required: keep the runtime so the tests run and fail on the engine's own error.
  if (process.env.POLAR_REQUIRE_DOCKER === "1") return { name: "docker", runtime: createDockerRuntime(), spec };
  return { name: "docker", runtime: null, missing: probe.reason, spec };
}

/** The host's shared libraries `binary` loads (from ldd), resolved to files. */
function sharedLibraries(binary: string): { name: string; host: string }[] {
  const ldd = Bun.spawnSync(["ldd", binary]).stdout.toString();
  const libs: { name: string; host: string }[] = [];
  for (const line of ldd.split("\n")) {
    const match = /^\s*(\S+)\s+=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+ld-linux\S*)\s/.exec(line);
    if (!match) continue;
    const host = match[2] ?? match[1]!;
    libs.push({ name: basename(match[2] ? match[1]! : host), host: realpathSync(host) });
  }
  return libs;
}

/** How to run the host's strace inside a sandbox of this runtime. */
export function straceInSandbox(runtime: RuntimeCase): { mounts: Mount[]; command: string[] } {
  const strace = Bun.which("strace");
  if (!strace) throw new Error("strace is not installed on the host");
  if (runtime.name === "process") return { mounts: [], command: [strace] };
  const libs = sharedLibraries(strace);
  const loader = libs.find((lib) => lib.name.startsWith("ld-linux"));
  if (!loader) throw new Error("no dynamic loader in ldd output of strace");
  const mounts: Mount[] = [
    { host: realpathSync(strace), sandbox: `${STRACE_DIR}/strace`, readonly: true },
    ...libs.map((lib) => ({ host: lib.host, sandbox: `${STRACE_DIR}/lib/${lib.name}`, readonly: true })),
  ];
  // The host's loader runs strace with the host's libraries; what strace starts uses the image's.
  return { mounts, command: [`${STRACE_DIR}/lib/${loader.name}`, "--library-path", `${STRACE_DIR}/lib`, `${STRACE_DIR}/strace`] };
}
