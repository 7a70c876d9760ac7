// Why: a coordinator issues each node id a secret at its first registration and asks for it at
// every later hello; the node keeps it next to its store (`<db>.identity.json`, mode 0600, one
// secret per coordinator URL, so no coordinator learns another's), so it survives restarts and
// crashes as the store does. A node on an in-memory store keeps it for its lifetime only.
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { z } from "zod";

export interface CoordinatorIdentity {
  /** The secret this coordinator issued, if it did. */
  load(): string | undefined;
  save(secret: string): void;
}

const IdentityFile = z.record(z.string(), z.object({ node_id: z.string(), node_secret: z.string() }));

export function identityFileOf(db: string): string | null {
  return db === ":memory:" || db === "" ? null : `${db}.identity.json`;
}

export function coordinatorIdentity(db: string, coordinatorUrl: string, nodeId: string): CoordinatorIdentity {
  const path = identityFileOf(db);
  let memory: string | undefined;
  const read = (): z.infer<typeof IdentityFile> => (path && existsSync(path) ? IdentityFile.parse(JSON.parse(readFileSync(path, "utf8"))) : {});
  return {
    load() {
      if (!path) return memory;
      const entry = read()[coordinatorUrl];
      return entry && entry.node_id === nodeId ? entry.node_secret : undefined;
    },
    save(secret) {
      if (!path) return void (memory = secret);
      const next = { ...read(), [coordinatorUrl]: { node_id: nodeId, node_secret: secret } };
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, path);
    },
  };
}
