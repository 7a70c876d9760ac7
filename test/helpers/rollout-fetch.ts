// Why: every service under test guards its rollout API with a token; the tests present it the way
// a trainer integration does (`Authorization: Bearer`), from one place.
import { TOKENS } from "../support/coordinator/cluster.ts";

export const ROLLOUT_TOKEN = TOKENS.rolloutToken;
export const ROLLOUT_AUTH = { authorization: `Bearer ${ROLLOUT_TOKEN}` } as const;

/** fetch() with the rollout token (a caller's own headers win). */
export function rolloutFetch(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, headers: { ...ROLLOUT_AUTH, ...(init.headers as Record<string, string> | undefined) } });
}
