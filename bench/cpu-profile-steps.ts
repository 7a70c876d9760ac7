// Why: "which step of a call costs what" must come from the running gateway, not from guesses;
// this folds a `bun --cpu-prof` profile of the gateway (bench/gateway-cpu.ts --profile) into the
// steps of the call path, each sample counted once under the first step its stack reaches.
//
//   bun bench/cpu-profile-steps.ts <gateway.cpuprofile> [<steps to show>]
//
// Shares are of the samples taken while the gateway ran JavaScript or native code for a call
// (idle, start-up and shutdown samples are left out); multiply by the measured CPU per call.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A step is recognised by a frame on the stack: `inside` (a function of ours, by file and name) and optionally the leaf's name. */
interface Step {
  name: string;
  inside: RegExp;
  leaf?: RegExp;
}

// Most specific first: a sample goes to the first step that matches its stack.
const STEPS: Step[] = [
  { name: "engine answer: JSON.parse", inside: /engine-client\.ts parseBody/, leaf: /^parse$/ },
  { name: "engine answer: schema check (zod, token arrays)", inside: /engine-client\.ts parseBody/ },
  { name: "engine request: JSON.stringify", inside: /engine-client\.ts request/, leaf: /^stringify$/ },
  { name: "engine request: fetch (send, receive, read text)", inside: /engine-client\.ts request/ },
  { name: "engine body + answer to pivot (vllm backend)", inside: /backends\/vllm\.ts complete|openai-chat\.ts/ },
  // libsql runs after an await (its connection pool), so its frames are not under calls-repo's.
  { name: "store: SQLite (libsql: prepare, bind, run, commit)", inside: /lib-esm\/sqlite3\.js|libsql\/index\.js/ },
  { name: "store: shared prefix with recent calls", inside: /recent-calls\.ts|same-json\.ts|token-codec\.ts concatPrefixLength/ },
  { name: "store: row building, encoding, drizzle mapping", inside: /calls-repo\.ts|token-codec\.ts|drizzle-orm\// },
  { name: "request body: JSON.parse", inside: /json-body\.ts readJson/, leaf: /^parse$/ },
  { name: "request body: read text", inside: /json-body\.ts readJson/ },
  { name: "request: dialect schema + pivot (zod)", inside: /dialects\/|zod/ },
  { name: "auth (token hash, session lookup)", inside: /gateway\/auth\.ts|sessions-repo\.ts/ },
  { name: "response: render + serialise", inside: /hono\/dist\/context|render/ },
  { name: "call path bookkeeping (gate, seq, timings)", inside: /call-path\.ts|policy-gate\.ts|seq-allocator\.ts/ },
  { name: "HTTP server, routing, event loop (Bun, hono)", inside: /./ },
];

/** Samples that are not a call's work: idle, module loading, shutdown. */
const NOT_A_CALL = /^\(idle\)|^\(program\)|^\(garbage collector\)$|server\.ts stop|cli\.ts stop|\(module\)|^require|bound require|^Module$/;

function frameName(n: ProfileNode): string {
  const file = n.callFrame.url.split("/").slice(-2).join("/");
  return `${file} ${n.callFrame.functionName || "(anonymous)"}`;
}

function main(path: string, show: number): void {
  const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const totals = new Map<string, number>();
  let counted = 0;
  let skipped = 0;
  const stacks = profile.samples.map((leafId) => {
    const stack: string[] = [];
    for (let id: number | undefined = leafId; id !== undefined; id = parentOf.get(id)) stack.push(frameName(byId.get(id)!));
    return stack;
  });
  // Start-up and shutdown: everything before the first and after the last sample inside a call.
  const inCall = (stack: string[]) => stack.some((f) => /routes\/llm\.ts|call-path\.ts/.test(f));
  const first = stacks.findIndex(inCall);
  const last = stacks.findLastIndex(inCall);
  profile.samples.forEach((leafId, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const stack = stacks[i]!;
    const leaf = byId.get(leafId)!.callFrame.functionName;
    if (i < first || i > last || stack.length <= 1 || stack.some((f) => NOT_A_CALL.test(f.split(" ").slice(1).join(" ")) || NOT_A_CALL.test(f))) {
      skipped += dt;
      return;
    }
    const step = STEPS.find((s) => stack.some((f) => s.inside.test(f)) && (!s.leaf || s.leaf.test(leaf)))!;
    totals.set(step.name, (totals.get(step.name) ?? 0) + dt);
    counted += dt;
  });
  console.log(`${path}: ${(counted / 1000).toFixed(0)} ms of call work sampled (${(skipped / 1000).toFixed(0)} ms idle, start-up or shutdown left out)`);
  console.log("| step | share of the gateway's CPU |");
  console.log("|---|---:|");
  for (const [name, t] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, show)) console.log(`| ${name} | ${((100 * t) / counted).toFixed(1)}% |`);
}

main(process.argv[2]!, Number(process.argv[3] ?? 30));
