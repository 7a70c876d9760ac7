// Why: sessions are how the gateway attributes a call to a rollout; this module owns their
// rows, token hashing and lookup, so no other code handles raw tokens at rest.
import { eq } from "drizzle-orm";
import { createHash, randomBytes } from "node:crypto";
import { heapBytes, type CacheBudget } from "../cache-budget.ts";
import { LruMap } from "../lru-map.ts";
import type { NodeDb } from "./db.ts";
import { sessions } from "./schema.ts";

export interface SessionRow {
  id: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  closedAt: string | null;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** 32 random bytes, URL-safe: unguessable and usable as an API key or a path segment. */
export function newSessionToken(): string {
  return `pl-${randomBytes(32).toString("base64url")}`;
}

export class SessionsRepo {
  /** Token hash → open session: every LLM call authenticates, and a read per call costs ~0.5 ms. */
  private readonly byTokenHash: LruMap<string, SessionRow>;

  constructor(
    private readonly db: NodeDb,
    maxCachedSessions = 10_000,
  ) {
    this.byTokenHash = new LruMap(
      maxCachedSessions,
      (row, hash) =>
        heapBytes.entry +
        heapBytes.string(hash) +
        heapBytes.string(row.id) +
        heapBytes.string(JSON.stringify(row.metadata)) +
        2 * heapBytes.string(row.createdAt),
    );
  }

  /** Counts the session lookup cache against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.byTokenHash.shareBudget(budget);
  }

  /** Creates a session; `token` defaults to a fresh random one (open mode passes the client's key). */
  async create(metadata: Record<string, unknown>, token = newSessionToken()): Promise<{ row: SessionRow; token: string }> {
    const row: SessionRow = {
      id: `ses_${randomBytes(12).toString("hex")}`,
      metadata,
      createdAt: new Date().toISOString(),
      closedAt: null,
    };
    await this.db.insert(sessions).values({ ...row, tokenHash: hashToken(token) });
    return { row, token };
  }

  async get(id: string): Promise<SessionRow | undefined> {
    const found = await this.db.select().from(sessions).where(eq(sessions.id, id)).limit(1);
    return found[0] && toRow(found[0]);
  }

  async findByToken(token: string): Promise<SessionRow | undefined> {
    const tokenHash = hashToken(token);
    const cached = this.byTokenHash.get(tokenHash);
    if (cached) return cached;
    const found = await this.db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash)).limit(1);
    const row = found[0] && toRow(found[0]);
    // Only open sessions are cached, so closing or deleting one evicts it.
    if (row && !row.closedAt) this.byTokenHash.set(tokenHash, row);
    return row;
  }

  async close(id: string): Promise<void> {
    this.evict(id);
    await this.db.update(sessions).set({ closedAt: new Date().toISOString() }).where(eq(sessions.id, id));
  }

  /** Deletes the session and (by cascade) its recorded calls. */
  async delete(id: string): Promise<void> {
    this.evict(id);
    await this.db.delete(sessions).where(eq(sessions.id, id));
  }

  private evict(id: string): void {
    for (const [hash, row] of this.byTokenHash) if (row.id === id) this.byTokenHash.delete(hash);
  }
}

function toRow(r: typeof sessions.$inferSelect): SessionRow {
  return { id: r.id, metadata: r.metadata, createdAt: r.createdAt, closedAt: r.closedAt };
}
