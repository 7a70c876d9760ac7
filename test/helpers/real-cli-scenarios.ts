// Why: the trajectory bench needs long sessions (20+ turns) recorded from the REAL harness CLIs,
// with thinking forced on and off, a second user query and a compaction; the recipes (mock-engine
// scripts, harness settings) live here so the bench only rebuilds and reports.
import type { RecordedCall } from "../../protocol/calls.ts";
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

async function recordWith(script: Script, thinking: boolean, req: CliRunRequest): Promise<{ calls: RecordedCall[]; runMs: number }> {
  const stack = await startStack({ engine: { script, model: CLI_MODEL }, gateway: { thinking } });
  try {
    const rec = await recordCliSession(stack, req);
    if (rec.run.exitCode !== 0) throw new Error(`${req.cli} failed: ${rec.run.error ?? rec.run.stderr.slice(-2000)}`);
    return { calls: rec.calls, runMs: rec.run.durationMs };
  } finally {
    await stack.stop();
  }
}

/**
 * Per installed CLI: `turns` shell steps then the answer, thinking on and off. Pi also: two user
 * queries (thinking on: Qwen3 drops query 1's reasoning from the second query's prompts), and
 * a compaction between two queries. `log` reports progress (runs take seconds each).
 */
export async function recordRealCliSessions(turns: number, log: (line: string) => void = () => {}): Promise<RealCliSession[]> {
  const sessions: RealCliSession[] = [];
  const add = async (name: string, cli: RealCli, script: Script, thinking: boolean, req: Omit<CliRunRequest, "cli">) => {
    log(`recording ${name} …`);
    const { calls, runMs } = await recordWith(script, thinking, { cli, ...req });
    sessions.push({ name, cli, calls, runMs });
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
