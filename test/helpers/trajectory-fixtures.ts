// Why: sessions recorded once from the real harness CLIs are committed as small fixture files so
// the trajectory property tests run without the CLIs; this is their one codec. A call's prompt
// ids are stored as "the first n tokens of an earlier call's prompt + output, then these", its
// messages as "the first n messages of an earlier call, then these", and unchanged tools once;
// the whole file is gzipped. The RecordedCall field names are read in this file only.
import { gunzipSync, gzipSync } from "node:zlib";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { RecordedCall } from "../../protocol/calls.ts";

export const TRAJECTORY_FIXTURE_DIR = join(import.meta.dir, "..", "fixtures", "trajectories");

export interface TrajectoryFixture {
  /** File name without `.json.gz`, e.g. `mini-thinking-on-vllm`. */
  name: string;
  /** What was run: harness, script, backend, thinking (for humans and test titles). */
  description: string;
  calls: RecordedCall[];
}

const Ref = z.object({ from: z.number().int().nonnegative().nullable(), shared: z.number().int().nonnegative() });
const EncodedCall = z.object({
  call: z.record(z.string(), z.unknown()),
  prompt: Ref.extend({ rest: z.array(z.number().int()) }).nullable(),
  messages: Ref.extend({ rest: z.array(z.unknown()) }),
  tools: z.union([z.object({ same_as: z.number().int().nonnegative() }), z.object({ list: z.array(z.unknown()) })]),
});
const FixtureFile = z.object({ name: z.string(), description: z.string(), calls: z.array(EncodedCall) });
type EncodedCall = z.infer<typeof EncodedCall>;

function sharedPrefix<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): number {
  let n = 0;
  while (n < a.length && n < b.length && same(a[n]!, b[n]!)) n++;
  return n;
}

/** The earlier entry (by index) sharing the longest prefix with `target`. */
function bestBase<T>(earlier: readonly (readonly T[])[], target: readonly T[], same: (x: T, y: T) => boolean) {
  let best = { from: null as number | null, shared: 0 };
  earlier.forEach((base, i) => {
    const shared = sharedPrefix(base, target, same);
    if (shared > best.shared) best = { from: i, shared };
  });
  return best;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sameId = (a: number, b: number) => a === b;

function encodeCalls(calls: readonly RecordedCall[]): EncodedCall[] {
  const sequences: number[][] = [];
  const messageLists: unknown[][] = [];
  return calls.map((call, i) => {
    const { prompt_ids: promptIds, request, ...rest } = call;
    const { messages, tools, ...requestRest } = request;
    const prompt = promptIds === null ? null : { ...bestBase(sequences, promptIds, sameId) };
    const msgs = bestBase(messageLists, messages, sameJson);
    const toolsFrom = calls.slice(0, i).findLastIndex((c) => sameJson(c.request.tools, tools));
    sequences.push([...(promptIds ?? []), ...(call.output_ids ?? [])]);
    messageLists.push(messages);
    return {
      call: { ...rest, request: requestRest },
      prompt: prompt === null ? null : { ...prompt, rest: promptIds!.slice(prompt.shared) },
      messages: { ...msgs, rest: messages.slice(msgs.shared) },
      tools: toolsFrom >= 0 ? { same_as: toolsFrom } : { list: tools },
    };
  });
}

function decodeCalls(encoded: readonly EncodedCall[]): RecordedCall[] {
  const calls: RecordedCall[] = [];
  for (const e of encoded) {
    const base = (from: number | null) => (from === null ? undefined : calls[from]);
    const promptBase = base(e.prompt?.from ?? null);
    const promptIds =
      e.prompt === null ? null : [...[...(promptBase?.prompt_ids ?? []), ...(promptBase?.output_ids ?? [])].slice(0, e.prompt.shared), ...e.prompt.rest];
    const messages = [...(base(e.messages.from)?.request.messages ?? []).slice(0, e.messages.shared), ...e.messages.rest];
    const tools = "same_as" in e.tools ? calls[e.tools.same_as]!.request.tools : e.tools.list;
    const request = { ...(e.call.request as Record<string, unknown>), messages, tools };
    calls.push(RecordedCall.parse({ ...e.call, request, prompt_ids: promptIds }));
  }
  return calls;
}

export function writeTrajectoryFixture(fixture: TrajectoryFixture, dir = TRAJECTORY_FIXTURE_DIR): string {
  const path = join(dir, `${fixture.name}.json.gz`);
  const file = { name: fixture.name, description: fixture.description, calls: encodeCalls(fixture.calls) };
  writeFileSync(path, gzipSync(JSON.stringify(file), { level: 9 }));
  return path;
}

export function readTrajectoryFixture(path: string): TrajectoryFixture {
  const file = FixtureFile.parse(JSON.parse(gunzipSync(readFileSync(path)).toString("utf8")));
  return { name: file.name, description: file.description, calls: decodeCalls(file.calls) };
}

/** Every committed fixture, by name. */
export function allTrajectoryFixtures(dir = TRAJECTORY_FIXTURE_DIR): TrajectoryFixture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json.gz"))
    .sort()
    .map((f) => readTrajectoryFixture(join(dir, f)));
}
