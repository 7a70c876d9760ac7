// Why: a rollout's lifecycle is an explicit state machine; its states and every allowed move
// are data here, checked by the one function that changes a rollout's state (rollout.ts).
import { NODE_ROLLOUT_STATES } from "../../protocol/node-link.ts";
import { ROLLOUT_RESULT_STATUSES } from "../../protocol/rollout.ts";

/** The stages, then how it ended: the words the link reports and a result's status on every hop. */
export const ROLLOUT_STATES = NODE_ROLLOUT_STATES;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

export const TERMINAL_STATES = ROLLOUT_RESULT_STATUSES satisfies readonly RolloutState[];
export type TerminalState = (typeof TERMINAL_STATES)[number];

/** Every failure exit a live state has: infrastructure error, task timeout, cancellation. */
const FAILURE_EXITS = ["ERROR", "TIMEOUT", "CANCELLED"] as const satisfies readonly RolloutState[];

/** state → the states it may move to. */
export const TRANSITIONS: Readonly<Record<RolloutState, readonly RolloutState[]>> = {
  QUEUED: ["INIT", ...FAILURE_EXITS],
  INIT: ["READY", ...FAILURE_EXITS],
  READY: ["RUN", ...FAILURE_EXITS],
  RUN: ["POSTRUN", ...FAILURE_EXITS],
  POSTRUN: ["COMPLETED", ...FAILURE_EXITS],
  COMPLETED: [],
  ERROR: [],
  TIMEOUT: [],
  CANCELLED: [],
};

export function canTransition(from: RolloutState, to: RolloutState): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isTerminal(state: RolloutState): state is TerminalState {
  return (TERMINAL_STATES as readonly RolloutState[]).includes(state);
}

export function isRolloutState(value: string): value is RolloutState {
  return (ROLLOUT_STATES as readonly string[]).includes(value);
}
