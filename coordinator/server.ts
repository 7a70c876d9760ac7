// Why: binds the coordinator to one port — the node and trainer WebSocket endpoints (each with
// its own token) and the HTTP app (rollout API, admin, metrics, dashboard) — around a store and
// a task catalog passed in, so tests and the CLI start the same thing.
import type { Server, ServerWebSocket } from "bun";
import type { ListenerErrorSink } from "../lib/events.ts";
import type { MetricsRegistry } from "../lib/metrics.ts";
import { stderrLogSink, type LogSink } from "../lib/json-log.ts";
import { adminErrorResponse, PolarError, wsErrorFrame } from "../protocol/errors.ts";
import { NodeHello, NodeResultHeader, NodeToCoordinator } from "../protocol/node-link.ts";
import { isTraceFrame, type TraceEncoding } from "../protocol/trace-frame.ts";
import { TrainerToCoordinator } from "../protocol/trainer-stream.ts";
import { createCoordinatorApp } from "./app.ts";
import { observeCoordinator } from "./observability.ts";
import { CoordinatorConfig, type CoordinatorConfigInput } from "./config.ts";
import { Coordinator } from "./coordinator.ts";
import { logCoordinatorEvents } from "./log.ts";
import { NodeHandler } from "./node-handler.ts";
import type { NodePeer, NodeState } from "./node-states.ts";
import { packedFromFrame, resultFrame, type PackedResult } from "./packed-results.ts";
import { PauseBook } from "./pauses.ts";
import { CallbackSender } from "../lib/rollout-api/callbacks.ts";
import { ROLLOUT_API_LIMITS } from "../lib/rollout-api/routes.ts";
import type { SchedulingPolicy } from "./scheduling.ts";
import { openCoordinatorDb } from "./store/db.ts";
import { CoordinatorRepo } from "./store/repo.ts";
import { loadCoordinatorCatalog, TaskCatalog } from "./task-catalog.ts";
import { presentedToken, tokenMatches } from "../lib/tokens.ts";
import { TrainerHandler } from "./trainer-handler.ts";
import type { TrainerPeer, TrainerStream } from "./trainer-streams.ts";
import { drained, inOrder, parseFrame, parseTraceFrame, sendJson, wakeDrainWaiters, type SocketData } from "./ws-peers.ts";

export interface RunningCoordinator {
  url: string;
  coordinator: Coordinator;
  /** The Prometheus registry /metrics renders (tests read it). */
  metrics: MetricsRegistry;
  config: CoordinatorConfig;
  stop(): Promise<void>;
}

function nodePeer(ws: ServerWebSocket<SocketData>): NodePeer {
  return { send: (m) => void sendJson(ws, m), close: (code, reason) => ws.close(code, reason) };
}

function trainerPeer(ws: ServerWebSocket<SocketData>, encoding: TraceEncoding): TrainerPeer {
  return {
    send: (m) => sendJson(ws, m),
    sendResult(out) {
      if (ws.readyState !== 1) return 0;
      const frame = resultFrame(out, encoding);
      ws.send(frame);
      return typeof frame === "string" ? frame.length : frame.byteLength;
    },
    drained: () => drained(ws),
    close: (code, reason) => ws.close(code, reason),
  };
}

/** A node's result as a trace frame: its header a `result` message, its blob checked against it. */
function resultOfTraceFrame(message: NodeResultHeader, blob: Uint8Array): PackedResult {
  return packedFromFrame(message.result, blob);
}

/** What a coordinator is given besides its config (tests replace them). */
export interface CoordinatorDeps {
  /** Where the structured log lines go (default: stderr). */
  logSink?: LogSink;
  /** Where a throwing event listener is reported (default: a JSON line on stderr). */
  onListenerError?: ListenerErrorSink;
  /** Where queued rollouts run (default: least loaded, warm image first). */
  policy?: SchedulingPolicy;
}

export async function startCoordinator(input: CoordinatorConfigInput, deps: CoordinatorDeps = {}): Promise<RunningCoordinator> {
  const config = CoordinatorConfig.parse(input);
  const store = await openCoordinatorDb(config.db, config.dbAuthToken);
  const repo = new CoordinatorRepo(store);
  const tasks = config.tasks ? await loadCoordinatorCatalog(config.tasks) : TaskCatalog.empty();
  const coordinator = new Coordinator(config, repo, {
    tasks,
    ...(deps.onListenerError && { onListenerError: deps.onListenerError }),
    ...(deps.policy && { policy: deps.policy }),
  });
  logCoordinatorEvents(coordinator.events, deps.logSink ?? stderrLogSink);
  const pauses = new PauseBook();
  const nodes = new NodeHandler(coordinator, pauses);
  const trainers = new TrainerHandler(coordinator, pauses, tasks);
  const callbacks = new CallbackSender();
  const observability = observeCoordinator(coordinator, pauses, () => trainers.streams());
  // Everyone listens before restore() runs: a group it completes reaches its trainer and callback.
  const app = createCoordinatorApp({ coordinator, config, tasks, callbacks, observability });
  await coordinator.restore();

  const server: Server<SocketData> = Bun.serve<SocketData>({
    hostname: config.host,
    port: config.port,
    idleTimeout: 0,
    // A backstop: the rollout API refuses bodies over its own limit first, in its own shape.
    maxRequestBodySize: ROLLOUT_API_LIMITS.maxBodyBytes * 2,
    fetch(req, srv) {
      const path = new URL(req.url).pathname;
      const role = path === "/v1/node" ? "node" : path === "/v1/trainer" ? "trainer" : null;
      if (!role) return app.fetch(req);
      const expected = role === "node" ? config.nodeToken : config.trainerToken;
      if (!tokenMatches(presentedToken(req.headers), expected)) return errorResponse(new PolarError("unauthorized", `${role} token required`));
      if (srv.upgrade(req, { data: { role, badFrames: 0, chain: Promise.resolve(), attached: null, onClose: null, drainWaiters: [] } })) return undefined;
      return errorResponse(new PolarError("bad_request", "expected a WebSocket upgrade"));
    },
    websocket: {
      // Nodes send results with traces; trainers send small control frames.
      maxPayloadLength: Math.max(config.maxNodeFrameBytes, config.maxTrainerFrameBytes),
      idleTimeout: 0,
      // Bun drops a frame sent past its backpressure limit; a frame is never dropped here: the
      // result pump waits for `drain` above SEND_HIGH_WATER_BYTES, and a peer that lets this much
      // pile up anyway is closed (it reconnects and gets what it is owed again).
      backpressureLimit: 256 * 1024 * 1024,
      closeOnBackpressureLimit: true,
      drain(ws) {
        wakeDrainWaiters(ws);
      },
      message(ws, raw) {
        const limit = ws.data.role === "node" ? config.maxNodeFrameBytes : config.maxTrainerFrameBytes;
        if ((typeof raw === "string" ? Buffer.byteLength(raw) : raw.length) > limit) {
          ws.close(1009, "frame too large");
          return;
        }
        if (ws.data.role === "node") onNodeFrame(ws, raw);
        else onTrainerFrame(ws, raw);
      },
      close(ws) {
        wakeDrainWaiters(ws);
        ws.data.onClose?.();
      },
    },
  });

  function onNodeFrame(ws: ServerWebSocket<SocketData>, raw: string | Buffer): void {
    const attached = ws.data.attached as { node: NodeState; peer: NodePeer } | null;
    if (attached) nodes.received(attached.node, attached.peer);
    if (attached && typeof raw !== "string" && isTraceFrame(raw)) {
      const frame = parseTraceFrame(ws, raw, NodeResultHeader, resultOfTraceFrame, config.maxBadFrames);
      if (frame) inOrder(ws, () => nodes.traceFrameResult(attached.node, attached.peer, frame.message.rollout_id, frame.message.attempt, frame.checked));
      return;
    }
    const message = parseFrame(ws, raw, attached ? NodeToCoordinator : NodeHello, config.maxBadFrames);
    if (!message) return;
    inOrder(ws, async () => {
      if (attached) return nodes.message(attached.node, attached.peer, message);
      const peer = nodePeer(ws);
      const node = await nodes.hello(peer, message as NodeHello);
      if (!node) return void (ws.readyState === 1 && ws.close(1002, "protocol version mismatch"));
      ws.data.attached = { node, peer };
      ws.data.onClose = () => nodes.closed(node, peer);
    });
  }

  function onTrainerFrame(ws: ServerWebSocket<SocketData>, raw: string | Buffer): void {
    const message = parseFrame(ws, raw, TrainerToCoordinator, config.maxBadFrames);
    if (!message) return;
    inOrder(ws, async () => {
      const attached = ws.data.attached as TrainerStream | null;
      if (attached) return trainers.message(attached, message);
      if (message.type !== "hello") return void sendJson(ws, wsErrorFrame(new PolarError("bad_request", "send hello first")));
      const peer = trainerPeer(ws, message.encoding);
      const stream = await trainers.hello(peer, message);
      if (!stream) return void (ws.readyState === 1 && ws.close(1002, "protocol version mismatch"));
      ws.data.attached = stream;
      ws.data.onClose = () => trainers.closed(stream, peer);
    });
  }

  const sweeper = setInterval(() => nodes.sweep(), config.heartbeatMs);
  const pruner = setInterval(() => void coordinator.persist(() => repo.prune(Date.now() - config.retentionMs)), config.pruneEveryMs);
  return {
    url: `http://${config.host}:${server.port}`,
    coordinator,
    metrics: observability.metrics,
    config,
    async stop() {
      clearInterval(sweeper);
      clearInterval(pruner);
      coordinator.stop();
      callbacks.stop();
      await server.stop(true);
      await coordinator.settled();
      store.close();
    },
  };
}

function errorResponse(err: PolarError): Response {
  const { body, status } = adminErrorResponse(err);
  return Response.json(body, { status });
}
