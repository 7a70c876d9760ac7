// Why: the coordinator parses every result a node reports with the one SessionResult schema
// (ReportedResult); its traces carry 10⁵ token numbers, so how those arrays are checked decides
// what a result costs beyond JSON.parse. Measures, in one run, the schema as committed against
// zod's per-element arrays (what RolloutTrace used before) and the loose shape the link had.
// Usage: bun bench/result-parse.ts [tokens per trace, default 8192] [traces, default 4]
import { z } from "zod";
import { ReportedResult } from "../protocol/node-link.ts";
import { SessionTiming } from "../protocol/rollout.ts";

const tokens = Number(process.argv[2] ?? 8192);
const traceCount = Number(process.argv[3] ?? 4);

const perElement = z.object({
  prompt_ids: z.array(z.number().int()),
  response_ids: z.array(z.number().int()),
  loss_mask: z.array(z.union([z.literal(0), z.literal(1)])),
  response_logprobs: z.array(z.number().finite()),
  finish_reason: z.string().nullable(),
  reward: z.number().finite(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
const schemas: [string, z.ZodType][] = [
  ["ReportedResult (one loop per token array)", ReportedResult],
  [
    "ReportedResult with zod per-element arrays",
    ReportedResult.safeExtend({ trajectory: ReportedResult.shape.trajectory.safeExtend({ traces: z.array(perElement) }) }),
  ],
  [
    "loose link shape (no trace checked)",
    z.looseObject({ session_id: z.string(), trajectory: z.looseObject({ traces: z.array(z.looseObject({ reward: z.number().optional() })) }) }),
  ],
];

const ids = Array.from({ length: tokens }, (_, i) => 1000 + i);
const trace = {
  prompt_ids: ids,
  response_ids: ids,
  loss_mask: ids.map(() => 1),
  response_logprobs: ids.map(() => -0.5),
  finish_reason: "stop",
  reward: 1,
  metadata: { policy_versions: [0] },
};
const traces = Array.from({ length: traceCount }, () => trace);
const text = JSON.stringify({
  session_id: "s",
  task_id: "t",
  status: "COMPLETED",
  trajectory: { status: "COMPLETED", traces, metadata: {}, error: null },
  timing: SessionTiming.parse({}),
  node_id: "n",
  error: null,
  metadata: {},
});
const parsed = Array.from({ length: 40 }, () => JSON.parse(text) as unknown);

/** Best of `rounds` mean times over the 40 objects: the least disturbed by other load. */
function best(work: (value: unknown) => unknown, rounds = 15): number {
  let min = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (const value of parsed) work(value);
    min = Math.min(min, (performance.now() - t0) / parsed.length);
  }
  return min;
}

const json = best(() => JSON.parse(text));
console.log(
  `result: ${traceCount} traces × ${tokens} tokens (${((4 * tokens * traceCount) / 1000).toFixed(0)}k numbers), ${(text.length / 1e6).toFixed(2)} MB of JSON`,
);
console.log(`| check | ms per result (best of 15) | × JSON.parse |`);
console.log(`|---|---|---|`);
console.log(`| JSON.parse alone | ${json.toFixed(3)} | 1.00 |`);
for (const [name, schema] of schemas) {
  const ms = best((v) => schema.parse(v));
  console.log(`| ${name} | ${ms.toFixed(3)} | ${(ms / json).toFixed(2)} |`);
}
