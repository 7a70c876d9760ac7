// Why: every `polar` subcommand (node and coordinator alike) declares its flags once (type, default, help text) and gets
// parsing, `--help` and clear errors for unknown or malformed flags from the same code.
import { parseArgs } from "node:util";

export interface FlagSpec {
  type: "string" | "boolean";
  help: string;
  short?: string;
  multiple?: boolean;
  /** Shown in --help; the command applies its own defaults (config modules own them). */
  default?: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export class UsageError extends Error {}

export type ParsedFlags = Record<string, string | boolean | string[] | undefined>;

/** Parses argv; returns null after printing help when `--help` is given. */
export function parseFlags(command: string, summary: string, specs: FlagSpecs, argv: string[]): ParsedFlags | null {
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, s]) => [name, { type: s.type, multiple: s.multiple ?? false, ...(s.short ? { short: s.short } : {}) }]),
  );
  let values: ParsedFlags;
  try {
    values = parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false })
      .values as ParsedFlags;
  } catch (err) {
    throw new UsageError(`${command}: ${(err as Error).message}\nRun 'polar ${command} --help' for the flags.`);
  }
  if (values.help) {
    console.log(helpText(command, summary, specs));
    return null;
  }
  return values;
}

export function helpText(command: string, summary: string, specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, s]) => {
    const flag = `--${name}${s.type === "string" ? " <value>" : ""}`;
    const extra = [s.multiple ? "repeatable" : "", s.default !== undefined ? `default ${s.default}` : ""].filter(Boolean).join("; ");
    return `  ${flag.padEnd(28)} ${s.help}${extra ? ` (${extra})` : ""}`;
  });
  return `polar ${command} — ${summary}\n\nFlags:\n${rows.join("\n")}\n  ${"--help".padEnd(28)} show this help`;
}

export function intFlag(values: ParsedFlags, name: string): number | undefined {
  const n = numberFlag(values, name);
  if (n !== undefined && !Number.isInteger(n)) throw new UsageError(`--${name} expects an integer, got "${String(values[name])}"`);
  return n;
}

export function numberFlag(values: ParsedFlags, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(n)) throw new UsageError(`--${name} expects a number, got "${String(raw)}"`);
  return n;
}

export function stringFlag(values: ParsedFlags, name: string): string | undefined {
  const raw = values[name];
  return typeof raw === "string" ? raw : undefined;
}

export function listFlag(values: ParsedFlags, name: string): string[] {
  const raw = values[name];
  return Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [];
}

/** A string flag restricted to `choices`; a usage error names them. */
export function oneOf<T extends string>(values: ParsedFlags, name: string, choices: readonly T[]): T | undefined {
  const value = stringFlag(values, name);
  if (value !== undefined && !(choices as readonly string[]).includes(value))
    throw new UsageError(`--${name} must be one of ${choices.join(", ")}, got "${value}"`);
  return value as T | undefined;
}

/** An `on | off` flag as a boolean (undefined when absent). */
export function onOffFlag(values: ParsedFlags, name: string): boolean | undefined {
  const value = oneOf(values, name, ["on", "off"] as const);
  return value === undefined ? undefined : value === "on";
}
