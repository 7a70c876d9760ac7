// Why: tests and benchmarks that run `polar coordinator` / `polar node` as real processes start
// them the same way — `bun bin/polar.ts …` with the test tokens, the coordinator's URL read from
// its first stdout line — and must kill every one of them afterwards, even when a test fails.
import { join } from "node:path";
import { TOKENS } from "../support/coordinator/cluster.ts";

const POLAR = join(import.meta.dir, "../../bin/polar.ts");

export type Child = ReturnType<typeof Bun.spawn>;

export class PolarProcesses {
  private readonly children: Child[] = [];

  spawn(args: string[], env: Record<string, string> = {}, stderr: "pipe" | "inherit" = "pipe"): Child {
    const child = Bun.spawn(["bun", POLAR, ...args], { stdout: "pipe", stderr, env: { ...process.env, ...env } });
    this.children.push(child);
    return child;
  }

  /** Starts a coordinator on `db` and resolves with its URL once it listens. */
  async coordinator(options: {
    db: string;
    port?: number;
    graceMs?: number;
    heartbeatMs?: number;
    extra?: string[];
    stderr?: "pipe" | "inherit";
  }): Promise<{ url: string; child: Child }> {
    const child = this.spawn(
      [
        "coordinator",
        ...["--port", String(options.port ?? 0), "--db", options.db],
        ...["--node-grace-ms", String(options.graceMs ?? 1500), "--heartbeat-ms", String(options.heartbeatMs ?? 500)],
        ...[
          "--node-token",
          TOKENS.nodeToken,
          "--trainer-token",
          TOKENS.trainerToken,
          "--admin-token",
          TOKENS.adminToken,
          "--rollout-token",
          TOKENS.rolloutToken,
        ],
        ...(options.extra ?? []),
      ],
      {},
      options.stderr ?? "inherit",
    );
    const line = await firstLine(child.stdout as ReadableStream<Uint8Array>);
    return { url: (JSON.parse(line) as { url: string }).url, child };
  }

  /** Starts `polar node` joined to a coordinator: two workers a stage, max_tokens capped at 2048, its store in `db`. */
  clusterNode(options: {
    id: string;
    db: string;
    engineUrl: string;
    coordinatorUrl: string;
    runtime?: "process" | "docker";
    stderr?: "pipe" | "inherit";
  }): Child {
    return this.spawn(
      [
        "node",
        ...["--node-id", options.id, "--port", "0", "--db", options.db, "--runtime", options.runtime ?? "process"],
        ...["--engine", options.engineUrl, "--coordinator", options.coordinatorUrl, "--admin-token", "cluster-admin-token-0123456789"],
        ...["--run-workers", "2", "--init-workers", "2", "--postrun-workers", "2", "--max-tokens-cap", "2048"],
      ],
      { POLAR_NODE_TOKEN: TOKENS.nodeToken },
      options.stderr,
    );
  }

  async killAll(): Promise<void> {
    for (const child of this.children) child.kill("SIGKILL");
    await Promise.all(this.children.map((c) => c.exited));
  }
}

/** The first line a process writes; fails if it exits before writing one. */
export async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the process exited before writing a line: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n")[0]!;
}
