// Why: the trajectory bench needs long sessions (20+ turns) recorded from the REAL harness CLIs,
// with thinking forced on and off, a second user query and compactions; the recipes (mock-engine
// scripts, harness settings) live here so the bench only rebuilds and reports.
import type { RecordedCall } from "../../protocol/calls.ts";
import type { HarnessOptions } from "../../node/harness/index.ts";
import { CLI_MODEL, cliInstalled, recordCliSession, REAL_CLIS, shellStepsScript, type CliRunRequest, type RealCli } from "./record-cli-session.ts";
import { startStack } from "./stack.ts";

export interface RealCliSession {
  name: string;
  cli: RealCli;
  calls: RecordedCall[];
  /** Wall time of the CLI run. */
  runMs: number;
}

type Script = ReturnType<typeof shellStepsScript>;
type Step = Script["steps"][number];

const shell = (i: number): Step => ({ think: `Step ${i}: write f${i}.txt.`, shell: `printf 'line ${i}' > f${i}.txt` });

async function recordWith(script: Script, thinking: boolean, req: CliRunRequest, maxModelLen?: number): Promise<{ calls: RecordedCall[]; runMs: number }> {
  const stack = await startStack({ engine: { script, model: CLI_MODEL, ...(maxModelLen === undefined ? {} : { maxModelLen }) }, gateway: { thinking } });
  try {
    const rec = await recordCliSession(stack, req);
    if (rec.run.exitCode !== 0) throw new Error(`${req.cli} failed: ${rec.run.error ?? rec.run.stderr.slice(-2000)}`);
    return { calls: rec.calls, runMs: rec.run.durationMs };
  } finally {
    await stack.stop();
  }
}

/**
 * A one-off tool output of ~14K tokens (2,000 six-digit lines; Qwen3 makes each digit a token).
 * The marker file makes it print once: the mock engine picks its step by the number of assistant
 * turns in the prompt, so after a compaction the script replays from the turns the harness kept,
 * and the replayed step must print nothing for the context to stay under the threshold.
 */
const BIG_OUTPUT = "[ -f .big ] || { touch .big; seq 100000 999999 | head -n 2000; }";

/** How one CLI is made to compact once inside a single `-p`/`exec` query (docs/harnesses.md). */
interface CompactionRecipe {
  cli: Exclude<RealCli, "pi">;
  options: HarnessOptions;
  /** The mock engine's context, when the harness's compaction needs more than the default 40,960. */
  maxModelLen?: number;
  /** Script step whose reply must also carry a `<summary>` block (Claude Code rejects summaries without one). */
  summaryStep?: number;
}

export const COMPACTION_RECIPES: CompactionRecipe[] = [
  // Auto-compact limit = 90% of model_context_window = 9,000 tokens; the run peaks at ~7.6K after.
  { cli: "codex", options: { contextWindow: 10_000 } },
  // Trigger = min(0.85·W, W − 20,000 − 13,000) = 22,000 for W = 55,000; with W = 40,960 it would
  // be 7,960, under Qwen Code's ~17K-token first prompt. Its 20K-token summary budget needs the
  // larger engine context (prompt + max_tokens ≤ 65,536).
  { cli: "qwen-code", options: { contextWindow: 55_000 }, maxModelLen: 65_536 },
  // Trigger = 40,960 − min(max output 4,096, 20,000) − 13,000 = 23,864 tokens. The summary request
  // comes at turn 2 (the first turn after the big output), with the tools still offered.
  { cli: "claude-code", options: { contextWindow: 40_960 }, summaryStep: 2 },
];

export function compactionScript(turns: number, summaryStep: number | undefined): Script {
  const steps: Step[] = Array.from({ length: turns }, (_, i) => (i === 1 ? { think: "Big output.", shell: BIG_OUTPUT } : shell(i + 1)));
  if (summaryStep !== undefined) {
    steps[summaryStep] = { ...steps[summaryStep], text: "<summary>Steps 1 and 2 are done; continue with the scripted shell steps.</summary>" };
  }
  return { steps: [...steps, { think: "Done.", text: "Done." }] };
}

/**
 * Per installed CLI: `turns` shell steps then the answer, thinking on and off, and (Codex, Qwen
 * Code, Claude Code) the same steps with one big tool output that makes the CLI compact once,
 * thinking on. Pi also: two user queries (thinking on: Qwen3 drops query 1's reasoning from the
 * second query's prompts), and a compaction between two queries. `log` reports progress (runs
 * take seconds each).
 */
export async function recordRealCliSessions(turns: number, log: (line: string) => void = () => {}): Promise<RealCliSession[]> {
  const sessions: RealCliSession[] = [];
  const add = async (name: string, cli: RealCli, script: Script, thinking: boolean, req: Omit<CliRunRequest, "cli">, maxModelLen?: number) => {
    log(`recording ${name} …`);
    const { calls, runMs } = await recordWith(script, thinking, { cli, ...req }, maxModelLen);
    sessions.push({ name, cli, calls, runMs });
    return calls;
  };
  const installed = REAL_CLIS.filter((cli) => {
    if (!cliInstalled(cli)) log(`${cli} not installed: no real-CLI rows for it (scripts/install-harnesses.sh)`);
    return cliInstalled(cli);
  });
  const instruction = `Write the files f1.txt to f${turns}.txt with the shell, one command per file, then say Done.`;
  for (const cli of installed) {
    for (const thinking of [true, false]) {
      await add(`${cli}, ${turns} shell steps, thinking ${thinking ? "on" : "off"}`, cli, shellStepsScript(turns), thinking, { instruction });
    }
  }
  for (const recipe of COMPACTION_RECIPES.filter((r) => installed.includes(r.cli))) {
    const engine = recipe.maxModelLen === undefined ? "" : `, engine context ${recipe.maxModelLen.toLocaleString("en")}`;
    const calls = await add(
      `${recipe.cli}, ${turns} shell steps, compaction (contextWindow ${recipe.options.contextWindow!.toLocaleString("en")}${engine}), thinking on`,
      recipe.cli,
      compactionScript(turns, recipe.summaryStep),
      true,
      { instruction: "Run the scripted shell steps, then say Done.", options: recipe.options },
      recipe.maxModelLen,
    );
    // A compaction that took leaves the last prompt well under the peak (a failed one, e.g. a
    // summary the CLI rejected, adds calls but the context keeps growing).
    const promptLengths = calls.map((c) => c.prompt_ids?.length ?? 0);
    if (promptLengths.at(-1)! >= Math.max(...promptLengths)) throw new Error(`${recipe.cli} did not compact: its thresholds or defaults changed`);
  }
  if (!installed.includes("pi")) return sessions;

  const half = Math.ceil(turns / 2);
  const twoQueries: Script = {
    steps: [
      ...Array.from({ length: half }, (_, i) => shell(i + 1)),
      { think: "Part one is done.", text: "Part one done." },
      ...Array.from({ length: half }, (_, i) => shell(half + i + 1)),
      { think: "All done.", text: "Done." },
    ],
  };
  // Pi takes each positional argument as one user message, processed in turn.
  const twoQueryRun = {
    instruction: `Part two: write f${half + 1}.txt to f${2 * half}.txt, then say Done.`,
    options: { extraArgs: [`Part one: write f1.txt to f${half}.txt with the shell, one command per file.`] },
  };
  await add(`pi, 2 queries × ${half} shell steps, thinking on`, "pi", twoQueries, true, twoQueryRun);

  // One big tool output (once: a marker file) pushes query 1 past Pi's compaction threshold
  // (contextWindow 8000 − reserveTokens 4800 = 3200 tokens); Pi compacts when the query ends and
  // runs query 2 on the summary plus the recent turns it keeps (keepRecentTokens 150).
  const compactionSteps: Step[] = Array.from({ length: turns }, (_, i) =>
    i === 1 ? { think: "Big output.", shell: "[ -f .big ] || { touch .big; yes 'polar compaction filler line' | head -n 300; }" } : shell(i + 1),
  );
  await add(`pi, ${turns} shell steps, compaction, 2nd query, thinking on`, "pi", { steps: [...compactionSteps, { think: "Done.", text: "Done." }] }, true, {
    instruction: "Part two: continue the steps.",
    options: { contextWindow: 8000, maxOutputTokens: 1024, extraArgs: ["Part one: run the scripted shell steps."] },
    extraSettings: { file: ".pi/agent/settings.json", merge: { compaction: { enabled: true, reserveTokens: 4800, keepRecentTokens: 150 } } },
  });
  return sessions;
}
