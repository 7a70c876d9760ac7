// Why: an operator needs one line per failed call and per 5xx to find out what went wrong, and a
// client needs an id to quote; so every request gets an id (echoed as `x-request-id`) and ends
// in at most one structured JSON line. Lines carry codes, ids and sizes — never a prompt, a
// token id, a session token or an error's raw text (asPolarError keeps that out of messages).
import { randomBytes } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { describeCause, type PolarError } from "../../protocol/errors.ts";

export interface LogLine {
  ts: string;
  level: "warn" | "error";
  msg: "call failed" | "server error";
  request_id: string;
  method: string;
  /** The path with a `/s/<token>` prefix redacted. */
  path: string;
  status: number;
  /** The streamed answer had already begun (status 200) when the call failed. */
  in_stream?: boolean;
  code?: string;
  message?: string;
  session_id?: string;
  dialect?: string;
  duration_ms: number;
  engine?: { url?: string; status?: number; attempts?: number };
  cause?: ReturnType<typeof describeCause>;
}

/** Where log lines go, each one JSON text: stderr by default, a capturing function in tests. */
export type LogSink = (jsonLine: string) => void;

export const stderrLogSink: LogSink = (jsonLine) => {
  process.stderr.write(`${jsonLine}\n`);
};

export const REQUEST_ID_HEADER = "x-request-id";
/** A client's own request id is kept when it is this tame; otherwise the gateway makes one. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One request's log: routes say what they are (an LLM call) and how they failed. */
export class RequestLog {
  private readonly started = performance.now();
  private call?: { dialect: string; sessionId?: string };
  private error?: PolarError;
  private emitted = false;

  constructor(
    readonly requestId: string,
    private readonly method: string,
    private readonly path: string,
    private readonly sink: LogSink,
  ) {}

  /** Marks the request as an LLM call (every failure of it is logged, 4xx included). */
  llmCall(dialect: string, sessionId?: string): void {
    this.call = { dialect, ...(sessionId && { sessionId }) };
  }

  /** The error the request is answered with. */
  failed(error: PolarError): void {
    this.error = error;
  }

  /** A streamed call failed after its 200 went out: logged now, the response being long gone. */
  failedInStream(error: PolarError): void {
    this.error = error;
    this.emit(200, true);
  }

  /** The response is ready: logs a failed call or any 5xx, once. */
  finish(status: number): void {
    if (status >= 500 || (this.call && this.error && status >= 400)) this.emit(status, false);
  }

  private emit(status: number, inStream: boolean): void {
    if (this.emitted) return;
    this.emitted = true;
    const e = this.error;
    const details = (e?.details ?? {}) as { engineUrl?: unknown; status?: unknown; attempts?: unknown };
    const engine =
      typeof details.engineUrl === "string" ? { url: details.engineUrl, status: numberOr(details.status), attempts: numberOr(details.attempts) } : undefined;
    const cause = describeCause(e?.cause);
    const line: LogLine = {
      ts: new Date().toISOString(),
      level: Math.max(status, e?.status ?? 0) >= 500 ? "error" : "warn",
      msg: this.call ? "call failed" : "server error",
      request_id: this.requestId,
      method: this.method,
      path: this.path,
      status,
      ...(inStream && { in_stream: true }),
      ...(e && { code: e.code, message: e.message }),
      ...(this.call?.sessionId && { session_id: this.call.sessionId }),
      ...(this.call && { dialect: this.call.dialect }),
      duration_ms: Math.round((performance.now() - this.started) * 10) / 10,
      ...(engine && { engine }),
      ...(cause && { cause }),
    };
    this.sink(JSON.stringify(line));
  }
}

function numberOr(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

declare module "hono" {
  interface ContextVariableMap {
    requestLog: RequestLog;
  }
}

/** Gives every request a RequestLog and answers its id in `x-request-id`. */
export function requestLogging(sink: LogSink): MiddlewareHandler {
  return async (c, next) => {
    const offered = c.req.header(REQUEST_ID_HEADER);
    const requestId = offered && CLIENT_REQUEST_ID.test(offered) ? offered : `req_${randomBytes(12).toString("hex")}`;
    const log = new RequestLog(requestId, c.req.method, c.req.path.replace(/^\/s\/[^/]+/, "/s/:token"), sink);
    c.set("requestLog", log);
    await next();
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
    log.finish(c.res.status);
  };
}
