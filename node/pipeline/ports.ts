// Why: the pipeline drives parts built elsewhere (sandbox preparation, the gateway's session
// service, harness runners, evaluators); these small ports are all it needs from them, so it is
// tested on its own and each real part plugs in by implementing one interface.
import type { AgentSpec, TaskRequest } from "../../protocol/rollout.ts";
import type { Strategy, TrajectoryResult } from "../../protocol/trace.ts";
import type { GatewayEndpoint } from "../harness/types.ts";
import type { PrepareAction, Sandbox } from "../runtime/types.ts";

/** Runs a task's prepare actions in a fresh sandbox (repository files, setup commands). */
export interface SandboxPreparer {
  prepare(sandbox: Sandbox, actions: readonly PrepareAction[], signal: AbortSignal): Promise<void>;
}

/** A gateway session opened for one rollout. */
export interface GatewaySession {
  id: string;
  /** The gateway's TCP base URLs and the session token (the harness's API key). */
  endpoint: GatewayEndpoint;
  /** This session's own unix socket on the host (in the sandbox's gateway folder, Sandbox.hostGatewayDir), when served. */
  socketPath?: string;
  /** The same socket as the sandbox sees it. */
  sandboxSocketPath?: string;
}

/** The gateway as the pipeline uses it: one session per rollout. */
export interface GatewaySessions {
  open(input: { rolloutId: string; sandbox: Sandbox; metadata: Record<string, unknown> }): Promise<GatewaySession>;
  /** Revokes the token (no more calls) and frees the session's caches and socket; keeps the calls. */
  close(sessionId: string): Promise<void>;
  /** Rebuilds the session's recorded calls into traces. */
  trajectory(sessionId: string, strategy: Strategy): Promise<TrajectoryResult>;
  /** Recorded calls that failed because no engine answered (connect errors, engine timeouts). */
  engineFailures(sessionId: string): Promise<number>;
}

export interface HarnessRunRequest {
  sandbox: Sandbox;
  /** Our harness kind (claude-code, qwen-code, codex, pi, mini, command). */
  harness: string;
  agent: AgentSpec;
  instruction: string;
  session: GatewaySession;
  /** The agent timeout: the runner kills the harness after it. */
  timeoutMs: number;
  signal: AbortSignal;
}

/** How the harness ended: all of this is the agent's outcome, never an infrastructure failure. */
export interface HarnessRunOutcome {
  exit_code: number | null;
  timed_out: boolean;
  final_output: string;
  error?: string;
  duration_ms: number;
}

/** Starts a harness inside a sandbox and waits for it. Throws only when it could not be started. */
export interface HarnessRunner {
  run(request: HarnessRunRequest): Promise<HarnessRunOutcome>;
}

export interface EvaluationRequest {
  rolloutId: string;
  request: TaskRequest;
  /** The sandbox the agent worked in (its patch / output is collected from here). */
  agentSandbox: Sandbox;
  harness: HarnessRunOutcome;
  signal: AbortSignal;
}

export interface Evaluation {
  reward: number;
  /** Goes into the result's metadata (`evaluation`). */
  detail: Record<string, unknown>;
}

/**
 * Scores a finished rollout; a fresh sandbox it needs it takes (and releases) itself, from the
 * node's pool (node/eval/sandbox-source.ts). Throws on an evaluator crash (an infrastructure failure).
 */
export interface RolloutEvaluator {
  evaluate(request: EvaluationRequest): Promise<Evaluation>;
}

/** Whether a rollout's task can be evaluated on this node; checked at INIT, before any sandbox is taken. */
export interface EvaluabilityCheck {
  /** Null when it can; otherwise why not, and the evaluation detail to report (status invalid). */
  check(request: TaskRequest, signal: AbortSignal): Promise<{ message: string; detail: Record<string, unknown> } | null>;
}
