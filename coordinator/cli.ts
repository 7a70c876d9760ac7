// Why: `polar coordinator` — turns flags and environment into a validated coordinator config,
// starts it, and stops cleanly on SIGINT/SIGTERM.
import { randomBytes } from "node:crypto";
import { type FlagSpecs, intFlag, numberFlag, oneOf, parseFlags, stringFlag } from "../lib/cli-args.ts";
import { CoordinatorConfig, STALE_ACTIONS } from "./config.ts";
import { startCoordinator } from "./server.ts";
import { coordinatorRolloutAccess } from "./app.ts";
import { describeRolloutAccess } from "../lib/rollout-api/access.ts";

const PLACEHOLDER = (c: string) => c.repeat(16);
const DEFAULTS = CoordinatorConfig.parse({ nodeToken: PLACEHOLDER("n"), trainerToken: PLACEHOLDER("t"), adminToken: PLACEHOLDER("a"), openRolloutApi: true });

const FLAGS: FlagSpecs = {
  host: { type: "string", help: "address to listen on", default: DEFAULTS.host },
  port: { type: "string", help: "port to listen on (0 = any free port)", default: String(DEFAULTS.port) },
  db: {
    type: "string",
    help: "SQLite file or :memory:, or a libsql:// / http(s):// / ws(s):// libSQL server URL (auth token: env POLAR_DB_AUTH_TOKEN)",
    default: DEFAULTS.db,
  },
  tasks: { type: "string", help: "JSONL task file trainers and rollout API requests may name tasks from" },
  "node-token": { type: "string", help: "token nodes present (env POLAR_NODE_TOKEN; generated if unset)" },
  "trainer-token": { type: "string", help: "token trainers present (env POLAR_TRAINER_TOKEN; generated if unset)" },
  "admin-token": { type: "string", help: "token for the admin API (env POLAR_ADMIN_TOKEN; generated if unset)" },
  "rollout-token": { type: "string", help: "token for the rollout API, /rollout/* (env POLAR_ROLLOUT_TOKEN; generated if unset, unless --open)" },
  open: { type: "boolean", help: "serve the rollout API without a token (only with a loopback --host)" },
  "metrics-require-admin-token": { type: "boolean", help: "/metrics answers only with the admin token" },
  "heartbeat-ms": { type: "string", help: "heartbeat interval asked of nodes", default: String(DEFAULTS.heartbeatMs) },
  "node-grace-ms": { type: "string", help: "how long a disconnected node's rollouts wait before being reassigned", default: String(DEFAULTS.nodeGraceMs) },
  "max-attempts": { type: "string", help: "assignments of one rollout before it fails", default: String(DEFAULTS.maxAttempts) },
  "max-staleness": { type: "string", help: "policy versions a rollout may lag behind (unset: no limit)" },
  "stale-action": { type: "string", help: `what happens to a too-stale rollout: ${STALE_ACTIONS.join(" | ")}`, default: DEFAULTS.staleAction },
  "max-policy-step": { type: "string", help: "how far one move may take the policy version", default: String(DEFAULTS.maxPolicyStep) },
  "retention-ms": { type: "string", help: "how long acknowledged results are kept", default: String(DEFAULTS.retentionMs) },
  "pass-rate-half-life": {
    type: "string",
    help: "half-life, in completed groups of a task, of its pass-rate estimate",
    default: String(DEFAULTS.passRateHalfLifeGroups),
  },
};

function token(flag: string | undefined, env: string, who: string): string {
  const value = flag ?? process.env[env];
  if (value) return value;
  const generated = `${who}-${randomBytes(24).toString("base64url")}`;
  console.error(`polar coordinator: no ${who} token given; generated one for this run: ${generated}`);
  return generated;
}

export async function runCoordinatorCli(argv: string[]): Promise<void> {
  const flags = parseFlags("coordinator", "queue, load balancing and trainer streams for a cluster of nodes", FLAGS, argv);
  if (!flags) return;
  const open = flags.open === true;
  const running = await startCoordinator({
    host: stringFlag(flags, "host"),
    port: intFlag(flags, "port"),
    db: stringFlag(flags, "db"),
    dbAuthToken: process.env.POLAR_DB_AUTH_TOKEN,
    tasks: stringFlag(flags, "tasks"),
    nodeToken: token(stringFlag(flags, "node-token"), "POLAR_NODE_TOKEN", "node"),
    trainerToken: token(stringFlag(flags, "trainer-token"), "POLAR_TRAINER_TOKEN", "trainer"),
    adminToken: token(stringFlag(flags, "admin-token"), "POLAR_ADMIN_TOKEN", "admin"),
    ...(open ? { openRolloutApi: true } : { rolloutToken: token(stringFlag(flags, "rollout-token"), "POLAR_ROLLOUT_TOKEN", "rollout") }),
    metricsRequireAdminToken: flags["metrics-require-admin-token"] === true,
    heartbeatMs: intFlag(flags, "heartbeat-ms"),
    nodeGraceMs: intFlag(flags, "node-grace-ms"),
    maxAttempts: intFlag(flags, "max-attempts"),
    maxStaleness: intFlag(flags, "max-staleness"),
    staleAction: oneOf(flags, "stale-action", STALE_ACTIONS),
    maxPolicyStep: intFlag(flags, "max-policy-step"),
    retentionMs: intFlag(flags, "retention-ms"),
    passRateHalfLifeGroups: numberFlag(flags, "pass-rate-half-life"),
  });
  // One machine-readable line, so scripts and tests can find the port.
  console.log(JSON.stringify({ event: "listening", url: running.url, db: running.config.db, rollout_api: running.config.openRolloutApi ? "open" : "token" }));
  console.error(`polar coordinator: listening on ${running.url}; ${describeRolloutAccess(coordinatorRolloutAccess(running.config))}`);
  const stop = async () => {
    await running.stop();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
