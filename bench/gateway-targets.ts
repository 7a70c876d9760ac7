// Why: the gateway benches compare, in one run and under the same load, this checkout's gateway
// with another checkout's (`--baseline DIR`) and with variants of itself — another environment
// (an allocator setting) or other flags (a cache budget) — so a memory or CPU trade-off is
// measured side by side rather than across runs on a machine whose load changes by the minute.
import { join } from "node:path";

export interface GatewayTarget {
  name: string;
  /** The checkout whose `bin/polar.ts gateway` runs. */
  cwd: string;
  /** Added to (or, with a value of "", removed from) the environment. */
  env: Record<string, string>;
  /** Added to the gateway's command line. */
  args: string[];
}

/**
 * `--variant NAME:SETTING,SETTING…`, each SETTING either `ENV_NAME=value` (an empty value unsets
 * it) or a gateway flag `--flag=value`, e.g. `purge10:MIMALLOC_PURGE_DELAY=10` or
 * `cache64:--cache-bytes=67108864`. A variant runs this checkout unless it has `@DIR` after its
 * name (`base-cache64@/tmp/base:--cache-bytes=67108864`).
 */
export function parseVariant(spec: string, root: string): GatewayTarget {
  const colon = spec.indexOf(":");
  const head = colon === -1 ? spec : spec.slice(0, colon);
  const [name, dir] = head.split("@") as [string, string | undefined];
  const target: GatewayTarget = { name, cwd: dir ?? root, env: {}, args: [] };
  for (const setting of colon === -1
    ? []
    : spec
        .slice(colon + 1)
        .split(",")
        .filter(Boolean)) {
    if (setting.startsWith("--")) {
      const eq = setting.indexOf("=");
      target.args.push(...(eq === -1 ? [setting] : [setting.slice(0, eq), setting.slice(eq + 1)]));
    } else {
      const eq = setting.indexOf("=");
      if (eq <= 0) throw new Error(`--variant ${spec}: "${setting}" is neither ENV=value nor --flag=value`);
      target.env[setting.slice(0, eq)] = setting.slice(eq + 1);
    }
  }
  return target;
}

/** This checkout, then `--baseline DIR` as "baseline", then each `--variant`. */
export function gatewayTargets(options: { baseline?: string; variant?: string[] }, root = join(import.meta.dir, "..")): GatewayTarget[] {
  return [
    { name: "gateway", cwd: root, env: {}, args: [] },
    ...(options.baseline ? [{ name: "baseline", cwd: options.baseline, env: {}, args: [] }] : []),
    ...(options.variant ?? []).map((v) => parseVariant(v, root)),
  ];
}

/** The process environment with a target's changes applied. */
export function targetEnv(target: GatewayTarget, extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, ...extra };
  for (const [name, value] of Object.entries(target.env)) {
    if (value === "") delete env[name];
    else env[name] = value;
  }
  return env;
}

/** `polar gateway`'s arguments for a target of these benches: its own port and db, the engine, no retries. */
export function gatewayArgs(target: GatewayTarget, options: { port: number; engineUrl: string; model: string; adminToken: string; dir: string }): string[] {
  return [
    "bin/polar.ts",
    "gateway",
    ...["--port", String(options.port), "--engine", options.engineUrl, "--model", options.model],
    ...["--db", join(options.dir, `${target.name}.db`), "--admin-token", options.adminToken, "--retries", "0"],
  ];
}
