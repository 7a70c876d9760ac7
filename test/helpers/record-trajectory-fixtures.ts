// Why: the trajectory fixtures (test/fixtures/trajectories/) are sessions of the REAL harness CLIs
// and of Polar's mini agent, driven by the scripted mock engine through the gateway with the
// vllm, tito and tito+splice backends, thinking on and off; the recipes live here and one run
// re-records them all (after a CLI upgrade or a change of the recorded call's shape):
//
//   bun test/helpers/record-trajectory-fixtures.ts [name-substring]
import type { BackendKind, BackendOptionsInput } from "../../node/gateway/backends/options.ts";
import { pinnedBinary } from "../../node/harness/index.ts";
import { compactionScript, COMPACTION_RECIPES } from "./real-cli-scenarios.ts";
import { CLI_MODEL, recordCliSession, shellStepsScript, type CliRunRequest } from "./record-cli-session.ts";
import { startStack } from "./stack.ts";
import { readTrajectoryFixture, writeTrajectoryFixture } from "./trajectory-fixtures.ts";

type Script = ReturnType<typeof shellStepsScript>;
type Step = Script["steps"][number];

const BACKENDS = {
  vllm: { backend: "vllm", backendOptions: {} },
  tito: { backend: "tito", backendOptions: {} },
  "tito-splice": { backend: "tito", backendOptions: { tokenSplice: true } },
} as const satisfies Record<string, { backend: BackendKind; backendOptions: Partial<BackendOptionsInput> }>;
type BackendName = keyof typeof BACKENDS;

interface Recipe {
  /** Harness and situation; the file name adds thinking and backend. */
  what: string;
  run: CliRunRequest;
  script: Script;
  maxModelLen?: number;
  combos: readonly (readonly [thinking: boolean, backend: BackendName])[];
  /** Checked on the recorded calls (e.g. that a compaction took place). */
  check?: (promptLengths: number[]) => string | null;
}

const shell = (i: number): Step => ({ think: `Step ${i}: write f${i}.txt.`, shell: `printf 'line ${i}' > f${i}.txt` });
const STEPS = 3;
const stepsInstruction = `Write the files f1.txt to f${STEPS}.txt with the shell, one command per file, then say Done.`;

/** Shell steps that also say a sentence: with thinking on, vLLM's content then starts with "\n\n". */
const narratedSteps: Script = {
  steps: [...[1, 2, 3].map((i) => ({ ...shell(i), text: `Writing f${i}.txt now.` })), { think: "All files are written.", text: "Done." }],
};
const twoQueries: Script = {
  steps: [shell(1), shell(2), { think: "Part one is done.", text: "Part one done." }, shell(3), shell(4), { think: "All done.", text: "Done." }],
};
const subAgentSpawn = `[ -n "$POLAR_SUBAGENT" ] || POLAR_SUBAGENT=1 ${pinnedBinary("pi")} -p --offline --no-session --provider polar --model ${CLI_MODEL} --system-prompt 'You are a file-writing sub-agent.' 'Write f1.txt and f3.txt.'`;
const subAgent: Script = { steps: [shell(1), { think: "Delegate to a sub-agent.", shell: subAgentSpawn }, shell(3), { think: "All done.", text: "Done." }] };
const compactionRecipe = (cli: "codex" | "qwen-code" | "claude-code") => COMPACTION_RECIPES.find((r) => r.cli === cli)!;
const compacted = (lengths: number[]) => (lengths.at(-1)! < Math.max(...lengths) ? null : "the harness did not compact");

const RECIPES: Recipe[] = [
  {
    what: "mini",
    run: { cli: "mini", instruction: stepsInstruction },
    script: narratedSteps,
    combos: [
      [true, "vllm"],
      [false, "vllm"],
      [true, "tito"],
      [true, "tito-splice"],
      [false, "tito-splice"],
    ],
  },
  {
    what: "pi-two-queries",
    run: {
      cli: "pi",
      instruction: "Part two: write f3.txt and f4.txt, then say Done.",
      options: { extraArgs: ["Part one: write f1.txt and f2.txt with the shell."] },
    },
    script: twoQueries,
    combos: [
      [true, "vllm"],
      [false, "vllm"],
      [true, "tito-splice"],
    ],
  },
  {
    what: "pi-subagent",
    run: { cli: "pi", instruction: "Write f1.txt, delegate to a sub-agent, write f3.txt, then say Done." },
    script: subAgent,
    combos: [
      [true, "vllm"],
      [false, "tito"],
    ],
  },
  {
    what: "codex-compaction",
    run: { cli: "codex", instruction: "Run the scripted shell steps, then say Done.", options: compactionRecipe("codex").options },
    script: compactionScript(6, undefined),
    combos: [[true, "vllm"]],
    check: compacted,
  },
  {
    what: "claude-code-compaction",
    run: { cli: "claude-code", instruction: "Run the scripted shell steps, then say Done.", options: compactionRecipe("claude-code").options },
    script: compactionScript(6, compactionRecipe("claude-code").summaryStep),
    combos: [[true, "vllm"]],
    check: compacted,
  },
  {
    what: "qwen-code-compaction",
    run: { cli: "qwen-code", instruction: "Run the scripted shell steps, then say Done.", options: compactionRecipe("qwen-code").options },
    script: compactionScript(6, undefined),
    maxModelLen: compactionRecipe("qwen-code").maxModelLen,
    combos: [[true, "tito"]],
    check: compacted,
  },
  { what: "codex", run: { cli: "codex", instruction: stepsInstruction }, script: shellStepsScript(STEPS), combos: [[false, "tito"]] },
  { what: "qwen-code", run: { cli: "qwen-code", instruction: stepsInstruction }, script: shellStepsScript(STEPS), combos: [[true, "tito-splice"]] },
  { what: "claude-code", run: { cli: "claude-code", instruction: stepsInstruction }, script: shellStepsScript(STEPS), combos: [[false, "vllm"]] },
];

async function recordOne(recipe: Recipe, thinking: boolean, backendName: BackendName): Promise<void> {
  const name = `${recipe.what}-thinking-${thinking ? "on" : "off"}-${backendName}`;
  if (process.argv[2] && !name.includes(process.argv[2])) return;
  const { backend, backendOptions } = BACKENDS[backendName];
  const engine = { script: recipe.script, model: CLI_MODEL, ...(recipe.maxModelLen === undefined ? {} : { maxModelLen: recipe.maxModelLen }) };
  const stack = await startStack({ engine, backend, backendOptions, gateway: { thinking } });
  try {
    const started = performance.now();
    const rec = await recordCliSession(stack, recipe.run);
    if (rec.run.exitCode !== 0) throw new Error(`${name}: ${recipe.run.cli} failed: ${rec.run.error ?? rec.run.stderr.slice(-2000)}`);
    const failed = rec.calls.filter((c) => c.error !== null || c.output_ids === null);
    if (failed.length > 0) throw new Error(`${name}: ${failed.length} calls without tokens`);
    const problem = recipe.check?.(rec.calls.map((c) => c.prompt_ids?.length ?? 0));
    if (problem) throw new Error(`${name}: ${problem}`);
    const description = `${recipe.run.cli} (${recipe.what}), thinking ${thinking ? "on" : "off"}, ${backendName} backend, mock engine with the Qwen3 template; ${rec.calls.length} calls`;
    const path = writeTrajectoryFixture({ name, description, calls: rec.calls });
    if (!Bun.deepEquals(readTrajectoryFixture(path).calls, rec.calls, true)) throw new Error(`${name}: the fixture does not decode to the recorded calls`);
    console.error(`${name}: ${rec.calls.length} calls in ${((performance.now() - started) / 1000).toFixed(1)} s → ${path}`);
  } finally {
    await stack.stop();
  }
}

if (import.meta.main) {
  for (const recipe of RECIPES) for (const [thinking, backend] of recipe.combos) await recordOne(recipe, thinking, backend);
}
