// The worker rebuilds what an in-thread rebuild gives. Each worker thread builds its own tokenizer
// (read back from the prepared-tokenizer cache on disk after the first build, see
// node/tokenizer/prepared-cache.ts), so this file no longer pays three full builds.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedCall } from "../../protocol/calls.ts";
import { CallsRepo } from "../store/calls-repo.ts";
import { openNodeStore, type OpenedStore } from "../store/db.ts";
import { SessionsRepo } from "../store/sessions-repo.ts";
import { getTokenizer } from "../tokenizer/index.ts";
import { rebuild } from "../trajectory/index.ts";
import { trajectoryTokenizer } from "./model-tokenizer.ts";
import { TrajectoryService } from "./trajectory-service.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function storeWithSession(): Promise<{ store: OpenedStore; calls: CallsRepo; sessionId: string; recorded: RecordedCall[] }> {
  const dir = mkdtempSync(join(tmpdir(), "polar-traj-"));
  const store = await openNodeStore(join(dir, "t.db"));
  cleanups.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { row } = await new SessionsRepo(store.db).create({});
  const calls = new CallsRepo(store.db);
  const tok = getTokenizer();
  const prompt = tok.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  const output = [...tok.encode("Hello there."), tok.eosTokenId];
  const call: RecordedCall = {
    session_id: row.id,
    seq: 0,
    dialect: "chat",
    request: { model: "m", messages: [{ role: "user", content: "hi" }], tools: [], sampling: {}, stream: false },
    response: {
      id: "r",
      model: "m",
      content: "Hello there.",
      tool_calls: [],
      finish_reason: "stop",
      usage: { prompt_tokens: prompt.length, completion_tokens: output.length },
    },
    prompt_ids: prompt,
    output_ids: output,
    logprobs: output.map(() => -0.25),
    engine_url: "http://127.0.0.1:1",
    policy_version: 0,
    timings: { queued_ms: 0, engine_ms: 1, total_ms: 1 },
    error: null,
    notes: null,
    started_at: new Date(0).toISOString(),
  };
  await calls.insert(call);
  return { store, calls, sessionId: row.id, recorded: [call] };
}

describe("TrajectoryService", () => {
  test("rebuilds in a worker exactly what an in-thread rebuild gives, and restarts after close", async () => {
    const { calls, sessionId, recorded } = await storeWithSession();
    const service = new TrajectoryService(calls);
    cleanups.push(() => service.close());
    const local = rebuild(recorded, "prefix-merge", { tokenizer: trajectoryTokenizer() });
    const viaWorker = await service.rebuild(sessionId, "prefix-merge");
    expect(viaWorker.session_id).toBe(sessionId);
    expect(viaWorker.traces).toEqual(local.traces);
    expect(viaWorker.traces[0]!.loss_mask.filter((m) => m === 1)).toHaveLength(recorded[0]!.output_ids!.length);
    service.close();
    expect((await service.rebuild(sessionId, "per-call")).traces).toHaveLength(1);
  }, 120_000);
});
