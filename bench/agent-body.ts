// Why: the gateway benchmarks (latency and CPU per call) must send the same coding-agent-shaped
// request, so they measure the same thing.

/** The tools a coding agent offers (bash, read_file), as Chat Completions function tools. */
export const AGENT_TOOLS = [
  {
    type: "function",
    function: {
      name: "bash",
      description: "Run a shell command in the repository.",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
  },
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a file.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
];

/**
 * A coding-agent-shaped chat body of roughly `bytes` bytes: system prompt, tools, a tool result;
 * then `turns` more tool calls with their results (~1% of `bytes` each), as an agent's later calls
 * re-send everything before and append what happened since.
 */
export function agentBody(model: string, bytes: number, stream: boolean, turns = 0): Record<string, unknown> {
  const line = "    def handle(self, request):  # route the request to its handler\n        return self.routes[request.path](request)\n";
  const fileDump = line.repeat(Math.max(1, Math.floor((bytes - 700) / line.length)));
  return {
    model,
    stream,
    max_tokens: 256,
    tools: AGENT_TOOLS,
    messages: [
      { role: "system", content: "You are a coding agent. Use the bash tool to inspect and fix the repository." },
      { role: "user", content: "The test suite fails in server/routes.py; find and fix the bug." },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"server/routes.py"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: fileDump },
      ...Array.from({ length: turns }, (_, t) => [
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: `call_${t + 2}`, type: "function", function: { name: "bash", arguments: `{"command":"python -m pytest -x tests/test_${t}.py"}` } },
          ],
        },
        {
          role: "tool",
          tool_call_id: `call_${t + 2}`,
          content: `tests/test_${t}.py::test_route FAILED\n${"E   AssertionError: expected 200\n".repeat(Math.ceil(bytes / 3200))}`,
        },
      ]).flat(),
    ],
  };
}
