// Why: every backend makes the same kind of engine call — pick an engine for the session, POST
// JSON, survive connect errors and 5xx with bounded exponential backoff, stop at a deadline, and
// parse the answer with zod — so the policy lives here once and backends only build bodies.
import { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";
import { EnginePool } from "./engine-pool.ts";
import { engineHttpError, isRetryableStatus } from "./engine-errors.ts";

export interface EngineClientOptions {
  urls: readonly string[];
  timeoutMs: number;
  retries: number;
  backoffMs: number;
  engineDownMs: number;
  maxSessions: number;
  apiKey?: string;
}

export interface EngineReply<T> {
  data: T;
  engineUrl: string;
  /** Attempts made (1 = no retry). */
  attempts: number;
}

interface EngineRequest<S extends z.ZodType> {
  /** Routing key (calls of one session stick to one engine); null: no session, nothing remembered. */
  sessionId: string | null;
  signal: AbortSignal;
  method?: "GET" | "POST";
  path: string;
  body?: unknown;
  /**
   * The body serialised (instead of `body`), built afresh for each attempt: a 100 KB body held by
   * the request across the engine's wait outlives JSC's young collections and piles up until a
   * full one; built where it is sent, only the fetch's own copy waits (freed when it is sent).
   */
  json?: () => string;
  /** Parses the answer's UTF-8 bytes (default JSON.parse of their text); the schema checks what it returns. */
  parse?: (body: Uint8Array) => unknown;
  schema: S;
  /** Extra headers (an API's own auth and version headers). */
  headers?: Record<string, string>;
}

/** `GET /v1/models` answer (OpenAI, vLLM, SGLang); vLLM's and SGLang's model cards carry `max_model_len`. */
const WireModelList = z.object({
  data: z.array(z.object({ id: z.string(), max_model_len: z.number().int().nullable().optional() })),
});

export interface ServedModel {
  id: string;
  /** Context window the engine reports, when it does. */
  maxModelLen?: number;
}

/** Outcome of one attempt that may be retried. */
type RetryableFailure = { kind: "connect"; url: string; cause: unknown } | { kind: "status"; error: PolarError };

export class EngineClient {
  readonly pool: EnginePool;

  constructor(private readonly options: EngineClientOptions) {
    this.pool = new EnginePool(options.urls, { downMs: options.engineDownMs, maxSessions: options.maxSessions });
  }

  /** One engine call with routing, retries, deadline and response validation. */
  async request<S extends z.ZodType>(req: EngineRequest<S>): Promise<EngineReply<z.infer<S>>> {
    // A timer cleared when the call ends: AbortSignal.timeout's would stay pending for the whole
    // timeout after every call (hundreds of thousands at load, each making timers slower).
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(new DOMException("engine call deadline", "TimeoutError")), this.options.timeoutMs);
    try {
      return await this.attempts(req, timer.signal);
    } finally {
      clearTimeout(timeout);
    }
  }

  private async attempts<S extends z.ZodType>(req: EngineRequest<S>, deadline: AbortSignal): Promise<EngineReply<z.infer<S>>> {
    const signal = AbortSignal.any([req.signal, deadline]);
    let last: RetryableFailure | undefined;
    for (let attempt = 1; attempt <= this.options.retries + 1; attempt++) {
      if (attempt > 1) await sleep(this.options.backoffMs * 2 ** (attempt - 2), signal).catch((e) => this.abortError(e, req.signal, deadline));
      const lease = this.pool.acquire(req.sessionId);
      try {
        const response = await fetch(lease.url + req.path, {
          method: req.method ?? "POST",
          headers: { ...this.headers(req.json !== undefined || req.body !== undefined), ...req.headers },
          body: req.json ? req.json() : req.body === undefined ? undefined : JSON.stringify(req.body),
          signal,
        }).catch((cause: unknown) => {
          if (signal.aborted) this.abortError(cause, req.signal, deadline);
          return { connectFailure: cause } as const;
        });
        if ("connectFailure" in response) {
          this.pool.markDown(lease.url);
          last = { kind: "connect", url: lease.url, cause: response.connectFailure };
          continue;
        }
        const body = await response.bytes().catch((e: unknown) => this.abortError(e, req.signal, deadline));
        if (!response.ok) {
          const error = engineHttpError(response.status, decoder.decode(body), lease.url, attempt);
          if (!isRetryableStatus(response.status)) throw error;
          last = { kind: "status", error };
          continue;
        }
        return { data: parseBody(req, body, lease.url), engineUrl: lease.url, attempts: attempt };
      } finally {
        lease.release();
      }
    }
    throw exhausted(last, this.options.retries + 1);
  }

  /** Models the engines serve: `GET /v1/models` on a healthy engine, outside any session. */
  async models(signal: AbortSignal = new AbortController().signal): Promise<ServedModel[]> {
    const reply = await this.request({ sessionId: null, signal, method: "GET", path: "/v1/models", schema: WireModelList });
    return reply.data.data.map((m) => ({ id: m.id, ...(m.max_model_len != null && { maxModelLen: m.max_model_len }) }));
  }

  private headers(hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    if (hasBody) headers["content-type"] = "application/json";
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    return headers;
  }

  /** Turns an abort into the right failure: the deadline → engine_timeout; the caller → its reason. */
  private abortError(cause: unknown, caller: AbortSignal, deadline: AbortSignal): never {
    if (deadline.aborted && !caller.aborted) {
      throw new PolarError("engine_timeout", `engine did not answer within ${this.options.timeoutMs} ms`);
    }
    if (caller.aborted) throw caller.reason;
    throw cause;
  }
}

const decoder = new TextDecoder();
const parseJson = (body: Uint8Array): unknown => JSON.parse(decoder.decode(body));

function parseBody<S extends z.ZodType>({ schema, path, parse = parseJson }: EngineRequest<S>, body: Uint8Array, engineUrl: string): z.infer<S> {
  let json: unknown;
  try {
    json = parse(body);
  } catch {
    throw new PolarError("engine_error", `engine answered ${path} with non-JSON`, { engineUrl });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new PolarError("engine_error", `unexpected engine answer on ${path}: ${parsed.error.message}`, {
      engineUrl,
      issues: parsed.error.issues,
    });
  }
  return parsed.data;
}

function exhausted(last: RetryableFailure | undefined, attempts: number): PolarError {
  if (last?.kind === "status") return last.error;
  const cause = last?.cause instanceof Error ? last.cause.message : String(last?.cause);
  // The engine's address stays in the details (logged), out of the message (shown to clients).
  return new PolarError("engine_unavailable", `no engine reachable after ${attempts} attempts`, { engineUrl: last?.url, cause });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
