// Why: harnesses offer differently shaped shell tools (Codex `exec_command {cmd}`, Claude Code
// `Bash {command, description}`, Qwen Code `run_shell_command`, Pi `bash`); a scripted shell step
// must become arguments that the harness's own schema accepts.

const SHELL_TOOL_NAMES = new Set([
  "bash",
  "shell",
  "exec_command",
  "run_shell_command",
  "execute_command",
  "run_command",
  "local_shell",
  "terminal",
  "exec",
  "sh",
]);

const COMMAND_PROPERTIES = ["command", "cmd", "commands", "script", "command_line", "commandLine"];

export interface OfferedTool {
  name: string;
  parameters: Record<string, unknown>;
}

export function isShellTool(name: string): boolean {
  return SHELL_TOOL_NAMES.has(name.toLowerCase());
}

export function findShellTool(tools: readonly OfferedTool[]): OfferedTool | undefined {
  return tools.find((t) => isShellTool(t.name));
}

type Schema = Record<string, unknown>;

function asSchema(value: unknown): Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Schema) : {};
}

function schemaType(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null");
  return undefined;
}

/** Arguments for running `command` through `tool`, shaped by the tool's JSON schema. */
export function buildShellArguments(tool: OfferedTool, command: string): Record<string, unknown> {
  const properties = asSchema(tool.parameters.properties);
  const required = Array.isArray(tool.parameters.required) ? tool.parameters.required.filter((r) => typeof r === "string") : [];
  const commandKey = COMMAND_PROPERTIES.find((k) => k in properties) ?? "command";
  const commandSchema = asSchema(properties[commandKey]);
  const args: Record<string, unknown> = {
    [commandKey]: schemaType(commandSchema) === "array" ? ["bash", "-lc", command] : command,
  };
  for (const key of required) {
    if (key in args) continue;
    args[key] = sensibleValue(key, asSchema(properties[key]), command);
  }
  return args;
}

function sensibleValue(key: string, schema: Schema, command: string): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const lower = key.toLowerCase();
  switch (schemaType(schema)) {
    case "integer":
    case "number":
      return lower.includes("timeout") ? 60_000 : 1;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
    default:
      if (lower.includes("desc") || lower.includes("reason") || lower.includes("justification")) return `Run: ${command}`;
      if (lower.includes("dir") || lower.includes("cwd") || lower.includes("path")) return ".";
      return command;
  }
}
