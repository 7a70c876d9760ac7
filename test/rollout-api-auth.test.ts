// Who may call the rollout API, attacked on running services (issue 17 §1): a standalone
// `polar node`, and a coordinator with a real node attached. No token, an unknown token and
// another role's token are refused in FastAPI's shape before anything is read or stored; the
// rollout token (as `Authorization: Bearer` or NVIDIA's `X-Polar-Control-Token`) and the admin
// token get in; /metrics can be closed to all but the admin token; `--open` exists only on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { TOKENS } from "./support/coordinator/cluster.ts";
import { startTarget, type RolloutTarget, type TargetKind } from "./helpers/rollout-targets.ts";
import { ADMIN_TOKEN } from "./helpers/node-stack.ts";
import { ROLLOUT_TOKEN } from "./helpers/rollout-fetch.ts";
import { firstLine, PolarProcesses } from "./helpers/polar-processes.ts";

const T = 120_000;
const REQUEST = { task_id: "auth-probe", instruction: "Say done.", agent: { harness: "mini" }, evaluator: { strategy: "session_completed" }, num_samples: 1 };
const ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: "POST", path: "/rollout/task/submit", body: REQUEST },
  { method: "GET", path: "/rollout/task/auth-probe" },
  { method: "DELETE", path: "/rollout/task/auth-probe?register_if_missing=true" },
  { method: "GET", path: "/rollout/status" },
];

function call(url: string, route: (typeof ROUTES)[number], headers: Record<string, string>): Promise<Response> {
  return fetch(`${url}${route.path}`, {
    method: route.method,
    headers: { "content-type": "application/json", ...headers },
    ...(route.body ? { body: JSON.stringify(route.body) } : {}),
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const kind of ["node", "coordinator"] as TargetKind[]) {
  describe(`the rollout API of a running ${kind}`, () => {
    let target: RolloutTarget;
    const admin = () => (kind === "node" ? ADMIN_TOKEN : TOKENS.adminToken);
    const otherRoles = kind === "node" ? {} : { node: TOKENS.nodeToken, trainer: TOKENS.trainerToken };

    beforeAll(async () => {
      target = await startTarget(kind, kind === "node" ? { node: { metrics_require_admin_token: true } } : { coordinator: { metricsRequireAdminToken: true } });
    }, T);
    afterAll(() => target?.stop());

    test(
      "no token, an unknown token or another role's token: refused in FastAPI's shape, nothing stored, the service up",
      async () => {
        const attempts: [string, Record<string, string>, number, RegExp][] = [
          ["none", {}, 401, /rollout token required/],
          ["unknown", bearer("not-the-rollout-token-0123456789"), 401, /invalid rollout token/],
          ["unknown control token", { "x-polar-control-token": "not-the-rollout-token-0123456789" }, 401, /invalid rollout token/],
          ["lower-case scheme, no value", { authorization: "Bearer " }, 401, /rollout token required/],
          ...Object.entries(otherRoles).map(
            ([role, token]) =>
              [role, bearer(token), 403, new RegExp(`the ${role} token does not open the rollout API`)] as [string, Record<string, string>, number, RegExp],
          ),
        ];
        let refused = 0;
        for (const [, headers, status, detail] of attempts) {
          for (const route of ROUTES) {
            const res = await call(target.url, route, headers);
            expect({ route: route.path, status: res.status }).toEqual({ route: route.path, status });
            const body = (await res.json()) as { detail: string };
            expect(Object.keys(body)).toEqual(["detail"]);
            expect(body.detail).toMatch(detail);
            if (status === 401) expect(res.headers.get("www-authenticate")).toBe("Bearer");
            refused++;
          }
        }
        expect(refused).toBe(attempts.length * ROUTES.length);
        if (kind === "node") expect((await fetch(`${target.url}/tasks`)).status).toBe(401);
        // Nothing was submitted or remembered as cancelled: the id is unknown, and free.
        const unknown = await fetch(`${target.url}/rollout/task/auth-probe`, { headers: bearer(ROLLOUT_TOKEN) });
        expect(unknown.status).toBe(404);
        expect((await fetch(`${target.url}/health`)).status).toBe(200);
      },
      T,
    );

    test(
      "the rollout token (Bearer or X-Polar-Control-Token) and the admin token get in",
      async () => {
        const submitted = await call(target.url, ROUTES[0]!, bearer(ROLLOUT_TOKEN));
        expect(submitted.status).toBe(200);
        expect(await submitted.json()).toEqual({ task_id: "auth-probe", status: "running" });
        const polled = await call(target.url, ROUTES[1]!, { "x-polar-control-token": ROLLOUT_TOKEN });
        expect(polled.status).toBe(200);
        expect(((await polled.json()) as { task_id: string }).task_id).toBe("auth-probe");
        expect((await call(target.url, ROUTES[3]!, bearer(admin()))).status).toBe(200);
        expect((await call(target.url, { method: "DELETE", path: "/rollout/task/auth-probe" }, bearer(admin()))).status).toBe(200);
        if (kind === "node") expect((await fetch(`${target.url}/tasks`, { headers: bearer(ROLLOUT_TOKEN) })).status).toBe(200);
      },
      T,
    );

    test(
      "/metrics with metrics_require_admin_token: 401 without the admin token, the rollout token is not enough",
      async () => {
        expect((await fetch(`${target.url}/metrics`)).status).toBe(401);
        expect((await fetch(`${target.url}/metrics`, { headers: bearer(ROLLOUT_TOKEN) })).status).toBe(401);
        const res = await fetch(`${target.url}/metrics`, { headers: bearer(admin()) });
        expect(res.status).toBe(200);
        expect(await res.text()).toContain("# TYPE");
      },
      T,
    );
  });
}

describe("--open", () => {
  const processes = new PolarProcesses();
  afterAll(() => processes.killAll());

  test(
    "refused unless the service listens on loopback only; on loopback the startup line says the API is open, and no token is asked",
    async () => {
      const dir = `/tmp/polar-open-${process.pid}`;
      const exposedNode = processes.spawn(["node", "--open", "--host", "0.0.0.0", "--port", "0", "--db", join(dir, "n.db"), "--admin-token", ADMIN_TOKEN]);
      expect(await exposedNode.exited).not.toBe(0);
      expect(await new Response(exposedNode.stderr as ReadableStream).text()).toContain(
        "open_rollout_api: an open rollout API needs a loopback host, not 0.0.0.0",
      );
      const exposedCoordinator = processes.spawn(["coordinator", "--open", "--host", "0.0.0.0", "--port", "0", "--db", join(dir, "c.db")]);
      expect(await exposedCoordinator.exited).not.toBe(0);
      expect(await new Response(exposedCoordinator.stderr as ReadableStream).text()).toContain("an open rollout API needs a loopback host");

      const open = processes.spawn([
        "coordinator",
        "--open",
        "--port",
        "0",
        "--db",
        join(dir, "c.db"),
        "--node-token",
        TOKENS.nodeToken,
        "--trainer-token",
        TOKENS.trainerToken,
        "--admin-token",
        TOKENS.adminToken,
      ]);
      const line = JSON.parse(await firstLine(open.stdout as ReadableStream<Uint8Array>)) as { url: string; rollout_api: string };
      expect(line.rollout_api).toBe("open");
      const status = await fetch(`${line.url}/rollout/status`);
      expect(status.status).toBe(200);
    },
    T,
  );
});
