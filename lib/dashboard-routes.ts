// Why: the dashboard is one static page (dashboard/: HTML, a script, a stylesheet and the vendored
// uPlot) that both services serve as it is — no build step — and that reads everything else from
// the service's admin API and `/events`. Files are read when asked for, never at import.
import { join } from "node:path";
import { Hono } from "hono";

const ROOT = join(import.meta.dir, "../dashboard");

/** The only files served, with their types. */
const FILES: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "charts.js": "text/javascript; charset=utf-8",
  "drilldown.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "vendor/uPlot.iife.min.js": "text/javascript; charset=utf-8",
  "vendor/uPlot.min.css": "text/css; charset=utf-8",
};

const file = (name: string, type: string) =>
  new Response(Bun.file(join(ROOT, name)), { headers: { "content-type": type, "cache-control": "no-cache", "x-content-type-options": "nosniff" } });

/** `GET /` → the page; `GET /dashboard/<file>` → its assets. */
export function dashboardRoutes(): Hono {
  const app = new Hono();
  app.get("/", () => file("index.html", "text/html; charset=utf-8"));
  app.get("/dashboard/*", (c) => {
    const name = c.req.path.slice("/dashboard/".length);
    const type = FILES[name];
    return type ? file(name, type) : c.json({ error: { code: "not_found", message: `no dashboard file ${name}` } }, 404);
  });
  return app;
}
