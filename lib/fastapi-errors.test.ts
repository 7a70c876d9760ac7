// The 422 words checked against what pydantic 2 (python mode, as FastAPI validates a JSON body)
// answers for Polar's TaskRequest fields: each expected entry was produced by pydantic itself.
import { describe, expect, test } from "bun:test";
import { RolloutTaskRequest } from "../protocol/rollout.ts";
import { parseLikePydantic } from "./fastapi-errors.ts";

const base = { task_id: "t", instruction: "i", agent: { harness: "mini" } };
const detail = (body: unknown) => {
  const r = parseLikePydantic(RolloutTaskRequest, body);
  if (r.ok) throw new Error("expected a refusal");
  return r.detail;
};

describe("pydantic's words for Polar's TaskRequest", () => {
  test("wrong types are named as pydantic names them, with the value given", () => {
    const got = detail({ task_id: 5, num_samples: "abc", agent: 5, timeout_seconds: "x", dispatch_priority: 1.5, metadata: [1] });
    expect(got).toContainEqual({ type: "string_type", loc: ["body", "task_id"], msg: "Input should be a valid string", input: 5 });
    expect(got).toContainEqual({
      type: "int_parsing",
      loc: ["body", "num_samples"],
      msg: "Input should be a valid integer, unable to parse string as an integer",
      input: "abc",
    });
    expect(got).toContainEqual({
      type: "int_from_float",
      loc: ["body", "dispatch_priority"],
      msg: "Input should be a valid integer, got a number with a fractional part",
      input: 1.5,
    });
    expect(got).toContainEqual({
      type: "float_parsing",
      loc: ["body", "timeout_seconds"],
      msg: "Input should be a valid number, unable to parse string as a number",
      input: "x",
    });
    expect(got).toContainEqual({
      type: "model_type",
      loc: ["body", "agent"],
      msg: "Input should be a valid dictionary or instance of AgentSpec",
      input: 5,
      ctx: { class_name: "AgentSpec" },
    });
    expect(got).toContainEqual({ type: "dict_type", loc: ["body", "metadata"], msg: "Input should be a valid dictionary", input: [1] });
  });

  test("`missing` only when the key is absent: null is a wrong type", () => {
    const absent = detail({ task_id: "t", agent: { harness: "mini" } });
    expect(absent).toEqual([{ type: "missing", loc: ["body", "instruction"], msg: "Field required", input: { task_id: "t", agent: { harness: "mini" } } }]);
    const nulls = detail({ ...base, instruction: null, num_samples: null, runtime: [] });
    expect(nulls).toContainEqual({ type: "string_type", loc: ["body", "instruction"], msg: "Input should be a valid string", input: null });
    expect(nulls).toContainEqual({ type: "int_type", loc: ["body", "num_samples"], msg: "Input should be a valid integer", input: null });
    expect(nulls).toContainEqual({
      type: "model_type",
      loc: ["body", "runtime"],
      msg: "Input should be a valid dictionary or instance of RuntimeSpec",
      input: [],
      ctx: { class_name: "RuntimeSpec" },
    });
  });

  test("bounds, nested fields and the model validator", () => {
    const got = detail({ ...base, agent: { harness: "h", env: { k: 1 } }, num_samples: 0, dispatch_priority: 101, timeout_seconds: 0, callback_url: 5 });
    expect(got).toContainEqual({
      type: "greater_than_equal",
      loc: ["body", "num_samples"],
      msg: "Input should be greater than or equal to 1",
      input: 0,
      ctx: { ge: 1 },
    });
    expect(got).toContainEqual({
      type: "less_than_equal",
      loc: ["body", "dispatch_priority"],
      msg: "Input should be less than or equal to 100",
      input: 101,
      ctx: { le: 100 },
    });
    expect(got).toContainEqual({ type: "greater_than", loc: ["body", "timeout_seconds"], msg: "Input should be greater than 0", input: 0, ctx: { gt: 0 } });
    expect(got).toContainEqual({ type: "string_type", loc: ["body", "agent", "env", "k"], msg: "Input should be a valid string", input: 1 });
    expect(got).toContainEqual({ type: "string_type", loc: ["body", "callback_url"], msg: "Input should be a valid string", input: 5 });
    const early = detail({ ...base, num_samples: 2, early_stop_min_usable_sessions: 3 });
    expect(early).toEqual([
      expect.objectContaining({
        type: "value_error",
        loc: ["body"],
        msg: "Value error, early_stop_min_usable_sessions cannot exceed num_samples",
        ctx: { error: "early_stop_min_usable_sessions cannot exceed num_samples" },
      }),
    ]);
    expect(detail({ ...base, runtime: { network: "bridge" } })).toContainEqual({
      type: "literal_error",
      loc: ["body", "runtime", "network"],
      msg: "Input should be 'none' or 'host'",
      input: "bridge",
      ctx: { expected: "'none' or 'host'" },
    });
  });

  test("what pydantic's lax mode accepts is accepted, converted as it converts it", () => {
    const r = parseLikePydantic(RolloutTaskRequest, {
      ...base,
      num_samples: " 4 ",
      dispatch_priority: "1_0",
      timeout_seconds: "1e3",
      early_stop_min_usable_sessions: "4.0",
      runtime: { prepare: [{ type: "exec", command: "true", max_attempts: "2" }] },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect([r.data.num_samples, r.data.dispatch_priority, r.data.timeout_seconds, r.data.early_stop_min_usable_sessions]).toEqual([4, 10, 1000, 4]);
    expect(r.data.runtime?.prepare[0]).toMatchObject({ max_attempts: 2 });
    expect(detail({ ...base, num_samples: "4.5" })).toContainEqual(expect.objectContaining({ type: "int_parsing", input: "4.5" }));
  });

  test("metadata is free: any JSON value is kept exactly as sent (the typed agent_timeout aside)", () => {
    const metadata = { group_id: 0, policy_version: 3, rollout_step: 12, tags: ["a", { b: null }], ratio: 0.5, ok: true };
    const r = parseLikePydantic(RolloutTaskRequest, { ...base, metadata });
    expect(r.ok && r.data.metadata).toEqual(metadata);
    expect(detail({ ...base, metadata: { agent_timeout: "soon" } })).toContainEqual(
      expect.objectContaining({ type: "float_parsing", loc: ["body", "metadata", "agent_timeout"] }),
    );
  });
});
