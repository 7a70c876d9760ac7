import { afterEach, expect, test } from "bun:test";
import type { TaskResult } from "../../protocol/rollout.ts";
import { CallbackSender } from "./callbacks.ts";

const result: TaskResult = { task_id: "t", status: "completed", results: [], result_paths: [] };
let listener: ReturnType<typeof Bun.serve> | undefined;
afterEach(() => listener?.stop(true));

function listen(answers: number[]): { url: string; seen: number[] } {
  const seen: number[] = [];
  listener = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      await req.json();
      const status = answers[seen.length] ?? 200;
      seen.push(status);
      return Response.json({ ok: status === 200 }, { status });
    },
  });
  return { url: `http://127.0.0.1:${listener.port}/cb`, seen };
}

test("what may be transient is retried until a 2xx; other answers end delivery", async () => {
  const sender = new CallbackSender({ attempts: 5, baseDelayMs: 1 });
  const transient = listen([503, 429, 200]);
  expect(await sender.send(transient.url, result)).toEqual({ delivered: true, attempts: 3, last_status: 200 });
  expect(transient.seen).toEqual([503, 429, 200]);
  listener!.stop(true);
  const refused = listen([404]);
  expect(await sender.send(refused.url, result)).toMatchObject({ delivered: false, attempts: 1, last_status: 404 });
});

test("an unreachable listener is retried, then given up", async () => {
  const sender = new CallbackSender({ attempts: 2, baseDelayMs: 1 });
  const outcome = await sender.send("http://127.0.0.1:9/cb", result);
  expect(outcome).toMatchObject({ delivered: false, attempts: 2, last_status: null });
});
