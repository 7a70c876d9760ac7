// Why: the Gym tests send rows as Gym's rollout collector sends them. A row's
// `responses_create_params` is NeMoGymResponseCreateParamsNonStreaming dumped by pydantic
// (nemo_gym/openai_utils.py): every field present, its default where the dataset set none
// (`parallel_tool_calls: true`, `tool_choice: "auto"`, `tools: []`, the rest null); the collector
// adds `agent_ref`, `_ng_task_index`, `_ng_rollout_index` (nemo_gym/rollout_collection.py) and
// NeMo RL adds `_rowidx`.

/** NeMoGymResponseCreateParamsNonStreaming's fields with their pydantic defaults. */
export const RESPONSES_CREATE_PARAMS_DEFAULTS = {
  background: null,
  include: null,
  instructions: null,
  max_output_tokens: null,
  max_tool_calls: null,
  metadata: null,
  model: null,
  parallel_tool_calls: true,
  previous_response_id: null,
  prompt: null,
  reasoning: null,
  service_tier: null,
  store: null,
  temperature: null,
  text: null,
  tool_choice: "auto",
  tools: [],
  top_logprobs: null,
  top_p: null,
  truncation: null,
  user: null,
  stream: null,
} as const;

export interface RowOptions {
  input: unknown;
  taskIndex?: number;
  rolloutIndex?: number;
  agentName?: string;
  params?: Record<string, unknown>;
  /** Task fields the dataset carries (instance_id, verifier_metadata, polar_task, …). */
  fields?: Record<string, unknown>;
}

/** One `/run` body as Gym's collector posts it. */
export function gymRow(options: RowOptions): Record<string, unknown> {
  return {
    responses_create_params: { ...RESPONSES_CREATE_PARAMS_DEFAULTS, input: options.input, ...options.params },
    agent_ref: { type: "responses_api_agents", name: options.agentName ?? "polar_agent" },
    _ng_task_index: options.taskIndex ?? 0,
    _ng_rollout_index: options.rolloutIndex ?? 0,
    _rowidx: (options.taskIndex ?? 0) * 100 + (options.rolloutIndex ?? 0),
    ...options.fields,
  };
}

/** A user message as Gym datasets write it (NeMoGymEasyInputMessage). */
export function userMessage(text: string): Record<string, unknown> {
  return { role: "user", content: text, type: "message" };
}

/**
 * The verify response as Gym sends it to /aggregate_metrics: `response` dropped but for its usage,
 * `responses_create_params` dropped (rollout_collection.py `_call_aggregate_metrics`).
 */
export function strippedForAggregation(result: Record<string, any>): Record<string, unknown> {
  const { response, responses_create_params: _params, ...rest } = result;
  return { ...rest, ...(response?.usage ? { response: { usage: response.usage } } : {}) };
}
