// Why: harness CLIs are not in task images; the node lends its installed ones. These are the
// read-only mounts every sandbox that may run a harness is created with (create time, because a
// running container cannot gain mounts), and the fixed places the sandbox runner finds them at.
import { existsSync, realpathSync } from "node:fs";
import { SANDBOX_HARNESS_DIR, SANDBOX_NODE_DIR, type Mount } from "../runtime/types.ts";
import { defaultInstallDir } from "./common.ts";

export const SANDBOX_NODE_BIN = `${SANDBOX_NODE_DIR}/bin/node`;
export const SANDBOX_BUN_BIN = `${SANDBOX_NODE_DIR}/bin/bun`;

export interface HarnessMountOptions {
  /** Installed CLIs (scripts/install-harnesses.sh); default defaultInstallDir(). */
  installDir?: string;
  /** The host's Node.js binary; default `node` on PATH. */
  nodeBinary?: string;
  /** The host's Bun binary (mini runs on it); default the one running Polar. */
  bunBinary?: string;
}

/** Installed CLIs at SANDBOX_HARNESS_DIR, node and bun under SANDBOX_NODE_DIR/bin, all read-only. */
export function harnessMounts(options: HarnessMountOptions = {}): Mount[] {
  const mounts: Mount[] = [];
  const installDir = options.installDir ?? defaultInstallDir();
  if (existsSync(installDir)) mounts.push({ host: realpathSync(installDir), sandbox: SANDBOX_HARNESS_DIR, readonly: true });
  const node = options.nodeBinary ?? Bun.which("node");
  if (node) mounts.push({ host: realpathSync(node), sandbox: SANDBOX_NODE_BIN, readonly: true });
  mounts.push({ host: realpathSync(options.bunBinary ?? process.execPath), sandbox: SANDBOX_BUN_BIN, readonly: true });
  return mounts;
}
