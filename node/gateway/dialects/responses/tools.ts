// Why: the engine sees a flat list of function tools, but Responses clients also send `namespace`
// tools (codex's `multi_agent_v1`) and route a call by its (namespace, name) pair. This module
// flattens namespaces under codex's own canonical flat name (`<namespace>__<name>`) and remembers
// the split, so a call the model makes can be sent back as `{namespace, name}`.
import { z } from "zod";
import type { PivotTool, PivotToolChoice } from "../../pivot.ts";
import { emptyParameters } from "../chat/parse.ts";
import { DROPPED, type ResponsesFunctionTool, type ResponsesTool, type ResponsesToolChoice } from "./schema.ts";

/** The model-visible name → the namespace and name the client registered. */
export const ToolNamespaces = z.record(z.string(), z.object({ namespace: z.string(), name: z.string() }));
export type ToolNamespaces = z.infer<typeof ToolNamespaces>;

/** codex's `ToolName::canonical_flat_name`: one `__` between namespace and name. */
export function flatToolName(namespace: string, name: string): string {
  return `${namespace.replace(/_+$/, "")}__${name.replace(/^_+/, "")}`;
}

function pivotTool(tool: ResponsesFunctionTool, name: string): PivotTool {
  const converted: PivotTool = { name, parameters: tool.parameters ?? emptyParameters() };
  if (tool.description) converted.description = tool.description;
  return converted;
}

/** Function tools as-is, namespace tools flattened; every other tool type is dropped. */
export function flattenTools(tools: ResponsesTool[]): { tools: PivotTool[]; namespaces: ToolNamespaces } {
  const flat: PivotTool[] = [];
  const namespaces: ToolNamespaces = {};
  for (const tool of tools) {
    if (tool.type === DROPPED.type) continue;
    if (tool.type === "function") {
      flat.push(pivotTool(tool, tool.name));
      continue;
    }
    for (const inner of tool.tools) {
      if (inner.type === DROPPED.type) continue;
      const name = flatToolName(tool.name, inner.name);
      namespaces[name] = { namespace: tool.name, name: inner.name };
      flat.push(pivotTool(inner, name));
    }
  }
  return { tools: flat, namespaces };
}

/** The name the model saw for a call the client echoes back (`namespace` set for namespaced tools). */
export function modelVisibleName(name: string, namespace: string | null | undefined): string {
  return namespace ? flatToolName(namespace, name) : name;
}

/** Forced function choices map to the pivot; hosted-tool and allowed-tools choices mean "auto". */
export function pivotToolChoice(choice: ResponsesToolChoice | null | undefined): PivotToolChoice | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === "string") return choice;
  if (choice.type === "function" && choice.name) return { name: choice.name };
  return undefined;
}
