// Why: Polar's rollout API (NVIDIA's Python rollout server) — submit a TaskRequest, poll or
// cancel a task, service status — written once over a RolloutApiPort, so `polar node` and the
// coordinator answer alike and a trainer integration written for NVIDIA's server works with
// either unchanged. Every answer is FastAPI's shape: `detail` on every error (a 500 included),
// 422 in pydantic's words; nothing runs before the caller's token is checked (./access.ts), and
// bodies are bounded in size and depth before any parsing.
import { Hono, type Context } from "hono";
import { TASK_ID_PATTERN, type TaskSubmitted } from "../../protocol/rollout.ts";
import { fieldError, jsonInvalid } from "../fastapi-errors.ts";
import { exceedsJsonDepth, readLimitedText } from "../http-body.ts";
import type { TaskCatalog } from "../task-catalog.ts";
import { SOURCES_MUST_EXIST, type HostPathPolicy } from "../upload-sources.ts";
import { rolloutApiGuard, type RolloutApiAccess } from "./access.ts";
import { CancelledIds } from "./cancelled-ids.ts";
import type { RolloutApiPort } from "./port.ts";
import { readTaskSubmission, type RequestRefusals } from "./submission.ts";
import { cancelledBeforeSubmit } from "./task-status.ts";

/** One body limit and one nesting limit for the rollout API of every service (the gateway's depth). */
export const ROLLOUT_API_LIMITS = { maxBodyBytes: 16 * 1024 * 1024, maxDepth: 256 } as const;

export interface RolloutApiOptions {
  /** Who may call these routes (a token, or open on loopback): checked before anything else. */
  access: RolloutApiAccess;
  catalog: TaskCatalog;
  /** Which host paths a request's upload sources may name (default: any that exists). */
  hostPaths?: HostPathPolicy;
  /** The service's own refusals of a valid request (checked last). */
  refuseRequest?: RequestRefusals;
  cancelledIds?: CancelledIds;
  limits?: { maxBodyBytes: number; maxDepth: number };
}

const NOT_FOUND = { detail: "Task not found" };
const TRUE_WORDS = new Set(["1", "true", "t", "yes", "y", "on"]);
const FALSE_WORDS = new Set(["0", "false", "f", "no", "n", "off"]);

type Answer = { status: number; body: unknown };

/** Runs a handler; anything it throws is a logged 500 `{detail}`, never Bun's plain text. */
async function guarded(c: Context, where: string, work: () => Promise<Answer>): Promise<Response> {
  try {
    const { status, body } = await work();
    return c.json(body, status as 200);
  } catch (err) {
    console.error(JSON.stringify({ level: "error", event: "rollout_api_error", where, error: err instanceof Error ? err.name : typeof err }));
    return c.json({ detail: "internal error" }, 500);
  }
}

export function rolloutApiRoutes(port: RolloutApiPort, options: RolloutApiOptions): Hono {
  const app = new Hono();
  app.use("/rollout/*", rolloutApiGuard(options.access));
  const limits = options.limits ?? ROLLOUT_API_LIMITS;
  const cancelled = options.cancelledIds ?? new CancelledIds();
  const rules = {
    catalog: options.catalog,
    hostPaths: options.hostPaths ?? SOURCES_MUST_EXIST,
    ...(options.refuseRequest ? { refuse: options.refuseRequest } : {}),
  };

  async function readBody(req: Request): Promise<{ ok: true; body: unknown } | { ok: false; answer: Answer }> {
    const text = await readLimitedText(req, limits.maxBodyBytes);
    if (text === null) return { ok: false, answer: { status: 413, body: { detail: `request body exceeds ${limits.maxBodyBytes} bytes` } } };
    if (exceedsJsonDepth(text, limits.maxDepth)) {
      return {
        ok: false,
        answer: { status: 422, body: fieldError([], `Value error, request body nests objects/arrays deeper than ${limits.maxDepth} levels`, "value_error") },
      };
    }
    try {
      return { ok: true, body: JSON.parse(text) };
    } catch (err) {
      return { ok: false, answer: { status: 422, body: jsonInvalid(err instanceof Error ? err.message : String(err)) } };
    }
  }

  app.post("/rollout/task/submit", (c) =>
    guarded(c, "submit", async () => {
      const refusal = port.refusal();
      if (refusal) return { status: 503, body: { detail: refusal } };
      const read = await readBody(c.req.raw);
      if (!read.ok) return read.answer;
      const submission = await readTaskSubmission(read.body, rules);
      if (!submission.ok) return { status: 422, body: { detail: submission.detail } };
      const { request } = submission;
      if (cancelled.has(request.task_id)) return { status: 409, body: { detail: `task ${request.task_id} was cancelled before submission` } };
      const outcome = await port.submit(submission);
      if (!outcome.accepted) return { status: outcome.status, body: { detail: outcome.detail } };
      // A DELETE ?register_if_missing that ran while this submit was being stored wins: the task stops.
      if (cancelled.has(request.task_id)) {
        await port.cancel(request.task_id);
        return { status: 409, body: { detail: `task ${request.task_id} was cancelled before submission` } };
      }
      return { status: 200, body: { task_id: request.task_id, status: "running" } satisfies TaskSubmitted };
    }),
  );

  app.get("/rollout/task/:id", (c) =>
    guarded(c, "status", async () => {
      const id = c.req.param("id");
      const status = TASK_ID_PATTERN.test(id) ? await port.status(id) : undefined;
      return status ? { status: 200, body: status } : { status: 404, body: NOT_FOUND };
    }),
  );

  app.delete("/rollout/task/:id", (c) =>
    guarded(c, "cancel", async () => {
      const id = c.req.param("id");
      const flag = (c.req.query("register_if_missing") ?? "false").trim().toLowerCase();
      if (!TRUE_WORDS.has(flag) && !FALSE_WORDS.has(flag)) {
        return {
          status: 422,
          body: {
            detail: [
              {
                type: "bool_parsing",
                loc: ["query", "register_if_missing"],
                msg: "Input should be a valid boolean, unable to interpret input",
                input: c.req.query("register_if_missing"),
              },
            ],
          },
        };
      }
      if (!TASK_ID_PATTERN.test(id)) return { status: 404, body: NOT_FOUND };
      const status = await port.cancel(id);
      if (status) return { status: 200, body: status };
      if (!TRUE_WORDS.has(flag)) return { status: 404, body: NOT_FOUND };
      cancelled.remember(id);
      return { status: 200, body: cancelledBeforeSubmit(id) };
    }),
  );

  app.get("/rollout/status", (c) => guarded(c, "service status", async () => ({ status: 200, body: await port.serviceStatus() })));
  return app;
}
