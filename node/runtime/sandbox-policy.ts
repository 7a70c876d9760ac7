// Why: a task request says what its sandbox needs — host files copied in, the host's network,
// capabilities kept — but only the node's operator may grant what reaches beyond the sandbox.
// This module is the one decision of what a request's runtime may ask for under the operator's
// policy: checked when a task is submitted (a 422 naming the field) and again when a sandbox is
// created or prepared (defence in depth: coordinator assignments and evaluators pass there too).
import { realpathSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import { PolarError } from "../../protocol/errors.ts";

export interface SandboxPolicy {
  /**
   * Host folders (real paths, no symlinks) whose files upload sources may name, after symlinks;
   * "any" trusts the caller (the CLI and tests, whose task files are the operator's own).
   */
  hostPathRoots: readonly string[] | "any";
  /** Whether a runtime may ask for `network: "host"` (the node's API, its engines, everything). */
  allowHostNetwork: boolean;
  /** Capabilities (normalized, CAP_*) a runtime may keep with cap_add; "ALL" in it allows any. */
  allowedCapabilities: readonly string[];
}

/** What a runtime built without a policy grants: everything (its caller is the operator). */
export const TRUSTED_CALLER_POLICY: SandboxPolicy = { hostPathRoots: "any", allowHostNetwork: true, allowedCapabilities: ["ALL"] };

/** One refused field, its location relative to the runtime spec (e.g. ["prepare", 2, "source"]). */
export interface PolicyRefusal {
  loc: (string | number)[];
  msg: string;
}

/** The part of a runtime spec (or a task's runtime, with eval_prepare) the policy reads. */
export interface RuntimeRequest {
  network?: string;
  cap_add?: readonly string[];
  prepare?: readonly unknown[];
  /** Task rows' evaluation-only steps; a request's runtime may carry them too. */
  eval_prepare?: unknown;
}

export interface SandboxPolicyInput {
  /** Configured roots; relative ones are resolved against the working folder. */
  hostPathRoots: readonly string[];
  allowHostNetwork?: boolean;
  allowCapAdd?: readonly string[];
}

/** "net_bind_service", "CAP_NET_BIND_SERVICE" → "CAP_NET_BIND_SERVICE"; "all" → "ALL". */
export function normalizeCapability(name: string): string {
  const upper = name.trim().toUpperCase();
  if (upper === "ALL") return "ALL";
  return upper.startsWith("CAP_") ? upper : `CAP_${upper}`;
}

/** The operator's policy; every root must exist (its real path is kept). Throws bad_request naming the root. */
export function sandboxPolicy(input: SandboxPolicyInput): SandboxPolicy {
  const roots = input.hostPathRoots.map((root, i) => {
    try {
      return realpathSync(resolve(root));
    } catch (err) {
      throw new PolarError("bad_request", `sandbox.host_path_roots[${i}] ${root}: ${(err as NodeJS.ErrnoException).code ?? "cannot be resolved"}`);
    }
  });
  return {
    hostPathRoots: [...new Set(roots)],
    allowHostNetwork: input.allowHostNetwork ?? false,
    allowedCapabilities: (input.allowCapAdd ?? []).map(normalizeCapability),
  };
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/**
 * The real path of a host path inside these roots, or why it may not be read. Checked lexically
 * first, so a path outside every root is refused without touching the file system (a request
 * cannot probe which host files exist); a path inside is then resolved through its symlinks.
 */
export function resolveHostPath(path: string, roots: readonly string[]): { real: string } | { refusal: string } {
  if (!isAbsolute(path) || path.includes("\0")) return { refusal: "a host path must be absolute (task files resolve relative sources against their folder)" };
  const lexical = resolve(path);
  if (!roots.some((root) => inside(lexical, root)))
    return { refusal: "host path is outside the folders this node's operator allows (sandbox.host_path_roots)" };
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch {
    return { refusal: "host path does not exist" };
  }
  if (!roots.some((root) => inside(real, root))) return { refusal: "host path leads (through a symlink) outside the folders this node's operator allows" };
  return { real };
}

/** Why a host path may not be read under these roots, or null ("any": never refused). */
export function hostPathRefusal(path: string, roots: SandboxPolicy["hostPathRoots"]): string | null {
  if (roots === "any") return null;
  const resolved = resolveHostPath(path, roots);
  return "refusal" in resolved ? resolved.refusal : null;
}

/** True when `real` (a real path) lies in one of the roots. */
export function withinRoots(real: string, roots: SandboxPolicy["hostPathRoots"]): boolean {
  return roots === "any" || roots.some((root) => inside(real, root));
}

function sourcesOf(actions: unknown, key: string): PolicyRefusal[] {
  if (!Array.isArray(actions)) return [];
  const found: PolicyRefusal[] = [];
  actions.forEach((action, index) => {
    if (typeof action !== "object" || action === null) return;
    const source = (action as { source?: unknown }).source;
    if (typeof source === "string") found.push({ loc: [key, index, "source"], msg: source });
  });
  return found;
}

/** Everything in a runtime request this policy refuses (empty: allowed). Reads the file system only for paths inside a root. */
export function runtimeRequestRefusals(runtime: RuntimeRequest | null | undefined, policy: SandboxPolicy): PolicyRefusal[] {
  if (!runtime) return [];
  const refusals: PolicyRefusal[] = [];
  if (runtime.network === "host" && !policy.allowHostNetwork) {
    refusals.push({ loc: ["network"], msg: 'network "host" is not allowed on this node (its operator can allow it with sandbox.allow_host_network)' });
  }
  const allowed = new Set(policy.allowedCapabilities);
  (runtime.cap_add ?? []).forEach((cap, index) => {
    if (allowed.has("ALL") || allowed.has(normalizeCapability(cap))) return;
    refusals.push({
      loc: ["cap_add", index],
      msg: `capability ${JSON.stringify(cap)} is not allowed on this node (its operator can allow it with sandbox.allow_cap_add)`,
    });
  });
  for (const source of [...sourcesOf(runtime.prepare, "prepare"), ...sourcesOf(runtime.eval_prepare, "eval_prepare")]) {
    const why = hostPathRefusal(source.msg, policy.hostPathRoots);
    if (why) refusals.push({ loc: source.loc, msg: why });
  }
  return refusals;
}

/** Throws `forbidden` naming every refused field; what runtimes call before they create a sandbox. */
export function assertRuntimeAllowed(runtime: RuntimeRequest, policy: SandboxPolicy): void {
  const refusals = runtimeRequestRefusals(runtime, policy);
  if (refusals.length === 0) return;
  throw new PolarError("forbidden", `sandbox refused: ${refusals.map((r) => `runtime.${r.loc.join(".")}: ${r.msg}`).join("; ")}`);
}
