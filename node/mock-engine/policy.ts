// Why: the scripted "model". It reads what a real model would see — the rendered prompt text —
// so chat, completions (token ids from the `tito` backend) and SGLang's /generate behave alike:
// the turn is the number of finished assistant turns, tools come from the `<tools>` block, and
// thinking is off when the template pre-filled an empty `<think>` block.
import { pythonJsonDumps } from "../tokenizer/python-json.ts";
import { stepForTurn, type Script } from "./script.ts";
import type { TaskPolicy } from "./task-policy.ts";
import { buildShellArguments, findShellTool, type OfferedTool } from "./shell-args.ts";

const ASSISTANT_OPEN = "<|im_start|>assistant";
const TURN_END = "<|im_end|>";
const EMPTY_THINK = "<think>\n\n</think>\n\n";

export interface PromptFacts {
  /** Finished assistant turns before the one being generated. */
  turn: number;
  tools: OfferedTool[];
  thinking: boolean;
}

export function readPromptFacts(promptText: string): PromptFacts {
  const opens = promptText.split(ASSISTANT_OPEN).length - 1;
  const lastOpen = promptText.lastIndexOf(ASSISTANT_OPEN);
  const generating = lastOpen !== -1 && !promptText.includes(TURN_END, lastOpen);
  const openTurn = generating ? promptText.slice(lastOpen + ASSISTANT_OPEN.length + 1) : "";
  return {
    turn: generating ? opens - 1 : opens,
    tools: readOfferedTools(promptText),
    thinking: !openTurn.startsWith(EMPTY_THINK),
  };
}

function readOfferedTools(promptText: string): OfferedTool[] {
  const start = promptText.indexOf("<tools>\n");
  const end = promptText.indexOf("\n</tools>", start);
  if (start === -1 || end === -1) return [];
  const tools: OfferedTool[] = [];
  for (const line of promptText.slice(start + "<tools>\n".length, end).split("\n")) {
    try {
      const parsed = JSON.parse(line) as { function?: { name?: unknown; parameters?: unknown } };
      const fn = parsed.function;
      if (fn && typeof fn.name === "string") {
        const parameters = typeof fn.parameters === "object" && fn.parameters !== null ? (fn.parameters as Record<string, unknown>) : {};
        tools.push({ name: fn.name, parameters });
      }
    } catch {
      // a tool line the template wrote that is not JSON: not offered as far as the policy knows
    }
  }
  return tools;
}

/**
 * The Qwen3-format text the scripted model "samples" for this prompt (EOS not included): the task
 * policy's step when the prompt holds a known task, else the script's step for the turn.
 */
export function scriptedCompletion(promptText: string, script: Script, tasks?: TaskPolicy): string {
  const facts = readPromptFacts(promptText);
  const step = tasks?.step(promptText, facts) ?? stepForTurn(script, facts.turn);
  // When the template pre-filled the empty think block, the model continues after it.
  let text = facts.thinking ? `<think>\n${step.think ?? ""}\n</think>\n\n` : "";
  const shellTool = step.shell !== undefined ? findShellTool(facts.tools) : undefined;
  if (step.shell !== undefined && shellTool) {
    if (step.text) text += `${step.text}\n\n`;
    const call = { name: shellTool.name, arguments: buildShellArguments(shellTool, step.shell) };
    text += `<tool_call>\n${pythonJsonDumps(call)}\n</tool_call>`;
  } else if (step.shell !== undefined) {
    text += step.text ?? `Run this command:\n\n\`\`\`bash\n${step.shell}\n\`\`\``;
  } else {
    text += step.text ?? "";
  }
  return text;
}
