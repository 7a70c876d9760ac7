// Why: evaluation needs a FRESH sandbox of the task's image, never the one the agent touched; it
// takes one from the node's SandboxPool, or — for `polar tasks validate` and tests — straight
// from a runtime, and prepares the task in it (repository, setup, evaluation-only steps).
import { realpathSync } from "node:fs";
import type { Task } from "../../protocol/task.ts";
import { prepareSandbox } from "../runtime/prepare.ts";
import { RuntimeSpec, SANDBOX_NODE_DIR, type Mount, type Sandbox, type SandboxRuntime } from "../runtime/types.ts";

/** Evaluation commands' PATH: Node.js (mounted at SANDBOX_NODE_DIR) first, then the usual system folders. */
export const EVALUATION_PATH = `${SANDBOX_NODE_DIR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** The part of SandboxPool evaluation uses; a SandboxPool is one. */
export interface SandboxSource {
  take(spec: RuntimeSpec, labels: { rollout_id: string }, signal?: AbortSignal): Promise<Sandbox>;
  release(sandbox: Sandbox): Promise<void>;
  /** True when take() hands out sandboxes with the task's prepare already run (a pool with prepareInPool). */
  readonly preparesTasks?: boolean;
}

/**
 * The host's node binary, read-only at SANDBOX_NODE_DIR/bin/node (JavaScript tasks run their tests
 * with it); none when the host has no node (their test logs then say `node: not found`).
 */
export function hostNodeMounts(): Mount[] {
  const node = Bun.which("node");
  return node ? [{ host: realpathSync(node), sandbox: `${SANDBOX_NODE_DIR}/bin/node`, readonly: true }] : [];
}

/** Sandboxes created on demand and destroyed on release (no prewarming). */
export function runtimeSource(runtime: SandboxRuntime, nodeId: string, mounts: Mount[] = hostNodeMounts()): SandboxSource {
  return {
    take: (spec, labels) => runtime.create({ spec, labels: { node_id: nodeId, rollout_id: labels.rollout_id }, mounts }),
    release: (sandbox) => sandbox.destroy(),
  };
}

/** A runtime spec from a task (the bundled image and /work when the task names none). */
export function taskRuntimeSpec(task: Task): RuntimeSpec {
  return RuntimeSpec.parse(task.runtime ?? {});
}

/**
 * A fresh sandbox with the task prepared and its eval_prepare steps run. Preparation failures are
 * infrastructure errors (they throw); the sandbox is released when they happen.
 */
export async function freshEvalSandbox(source: SandboxSource, task: Task, rolloutId: string, signal?: AbortSignal): Promise<Sandbox> {
  const spec = taskRuntimeSpec(task);
  const sandbox = await source.take(spec, { rollout_id: rolloutId }, signal);
  try {
    if (!source.preparesTasks) await prepareSandbox(sandbox, spec.prepare, signal);
    await prepareSandbox(sandbox, task.runtime?.eval_prepare ?? [], signal);
    return sandbox;
  } catch (err) {
    await source.release(sandbox).catch(() => undefined);
    throw err;
  }
}
