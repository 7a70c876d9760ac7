// Why: a node or trainer token says "one of ours", not "which one". Each node id and trainer id is
// issued a secret at its first hello, which the peer keeps and must present at every later hello,
// so holding a role token is not enough to act as another peer; and while an id is connected, a
// second connection claiming it is refused rather than preferred. Only a hash of each secret is
// stored (the coordinator's `meta` table), and admissions run one at a time, so two hellos racing
// for one id cannot both be issued a secret.
import { createHash, randomBytes } from "node:crypto";
import { tokenMatches } from "../lib/tokens.ts";
import { IDENTITY_CLOSE, PolarError, wsErrorFrame } from "../protocol/errors.ts";
import type { Coordinator } from "./coordinator.ts";

export type PeerKind = "node" | "trainer";

export type Admission<T> = { ok: true; value: T } | { ok: false; code: number; reason: string };

export interface IdentityStore {
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  deleteMeta(key: string): Promise<void>;
}

const hashOf = (secret: string) => createHash("sha256").update(secret).digest("hex");
const keyOf = (kind: PeerKind, id: string) => `${kind}_secret:${id}`;

export class PeerIdentities {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: IdentityStore,
    /** The coordinator's ordered store writes. */
    private readonly persist: <T>(write: () => Promise<T>) => Promise<T>,
  ) {}

  /**
   * Admits a hello for `id`: refused while `isLive()`, or when the id holds a secret and
   * `presented` is not it; otherwise `attach` runs (still inside the admission, so nothing else
   * is admitted between the check and the attach) with the secret issued now, if this is the id's
   * first registration.
   */
  admit<T>(
    kind: PeerKind,
    id: string,
    presented: string | undefined,
    isLive: () => boolean,
    attach: (issued: string | undefined) => T | Promise<T>,
  ): Promise<Admission<T>> {
    const run = async (): Promise<Admission<T>> => {
      const stored = await this.store.getMeta(keyOf(kind, id));
      if (stored !== undefined && !tokenMatches(presented === undefined ? undefined : hashOf(presented), stored)) {
        return {
          ok: false,
          code: IDENTITY_CLOSE.unproven,
          reason:
            presented === undefined
              ? `${kind} ${id} was registered before: its hello must carry the ${kind}_secret it was issued`
              : `wrong ${kind}_secret for ${kind} ${id}`,
        };
      }
      if (isLive()) return { ok: false, code: IDENTITY_CLOSE.alreadyConnected, reason: `${kind} ${id} is already connected` };
      let issued: string | undefined;
      if (stored === undefined) {
        issued = randomBytes(32).toString("base64url");
        await this.persist(() => this.store.setMeta(keyOf(kind, id), hashOf(issued!)));
      }
      return { ok: true, value: await attach(issued) };
    };
    const next = this.chain.then(run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Operator: the id's next hello registers it afresh (a node whose store was lost). */
  async forget(kind: PeerKind, id: string): Promise<boolean> {
    const had = (await this.store.getMeta(keyOf(kind, id))) !== undefined;
    if (had) await this.persist(() => this.store.deleteMeta(keyOf(kind, id)));
    return had;
  }
}

/** Tells a refused peer why (an error frame, then the close code) and records it. */
export function refusePeer(
  c: Coordinator,
  peer: { send(m: never): unknown; close(code: number, reason: string): void },
  kind: PeerKind,
  id: string,
  refusal: { code: number; reason: string },
): void {
  peer.send(wsErrorFrame(new PolarError(refusal.code === IDENTITY_CLOSE.unproven ? "unauthorized" : "conflict", refusal.reason)) as never);
  // A close reason is at most 123 bytes; the frame above carries the whole of it.
  peer.close(refusal.code, refusal.reason.slice(0, 100));
  c.events.emit("peer.refused", { kind, id, reason: refusal.reason, at: Date.now() });
}
