// Why: the two credential kinds (per-session LLM keys, the operator's admin token) must never
// stand in for each other; this module is the only place that reads credentials off a request.
import { presentedToken, tokenMatches } from "../../lib/tokens.ts";
import { PolarError } from "../../protocol/errors.ts";
import type { SessionRow, SessionsRepo } from "../store/sessions-repo.ts";

/** The key a client sent: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
export function presentedKey(headers: Headers): string | undefined {
  return presentedToken(headers) || headers.get("x-api-key")?.trim() || undefined;
}

export function isAdminToken(key: string | undefined, adminToken: string): boolean {
  return tokenMatches(key, adminToken);
}

export class SessionAuth {
  constructor(
    private readonly sessions: SessionsRepo,
    private readonly adminToken: string,
    private readonly open: boolean,
  ) {}

  /** The session an LLM call belongs to; a path token wins over a header key. */
  async forLlmCall(pathToken: string | undefined, headers: Headers): Promise<SessionRow> {
    const key = pathToken ?? presentedKey(headers);
    if (!key) throw new PolarError("unauthorized", "missing API key: send the session token as a Bearer token or x-api-key");
    if (isAdminToken(key, this.adminToken)) throw new PolarError("unauthorized", "the admin token is not an LLM API key");
    const found = await this.sessions.findByToken(key);
    if (found) {
      if (found.closedAt) throw new PolarError("unauthorized", `session ${found.id} is closed`);
      return found;
    }
    if (!this.open) throw new PolarError("unauthorized", "unknown API key");
    return (await this.sessions.create({ open: true }, key)).row;
  }

  /** Guards the session and admin APIs. */
  async requireAdmin(headers: Headers): Promise<void> {
    const key = presentedKey(headers);
    if (isAdminToken(key, this.adminToken)) return;
    if (key && (await this.sessions.findByToken(key))) {
      throw new PolarError("forbidden", "a session token does not grant the session API");
    }
    throw new PolarError("unauthorized", "admin token required");
  }
}
