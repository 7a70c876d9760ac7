// The dashboard in a real browser (Debian's chromium, headless, driven by playwright-core)
// against a running `polar demo --cluster --keep`: the page connects with the admin token, its
// tables, cards, charts' data and solve-rate grid hold the numbers the admin API reports, a task
// submitted meanwhile arrives live over /events, and a drill-down opens a rollout's trajectory.
// The screenshot is taken every run; POLAR_UPDATE_SCREENSHOT=1 writes it to docs/dashboard.png
// (shown in the README), so an ordinary run leaves the checkout as it was.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { DashboardSnapshot, GroupDetail, RolloutDetail } from "../protocol/admin.ts";
import { waitFor } from "./support/coordinator/cluster.ts";
import { ADMIN_TOKEN, pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";

// The page's globals, inside page.evaluate / waitForFunction callbacks (they run in the browser).
declare const document: { getElementById(id: string): { textContent: string | null } | null; querySelectorAll(selector: string): { length: number } };
declare const window: unknown;
type HTMLElement = { dataset: Record<string, string | undefined>; parentElement: unknown };

const CHROMIUM = "/usr/bin/chromium";
const ROOT = join(import.meta.dir, "..");
const SCREENSHOT_DOCS = join(ROOT, "docs/dashboard.png");
const required = process.env.POLAR_REQUIRE_BROWSER === "1";
const missing = existsSync(CHROMIUM) ? null : `Debian chromium is not installed at ${CHROMIUM} (apt-get install chromium)`;
if (missing && required) throw new Error(`POLAR_REQUIRE_BROWSER=1: ${missing}`);

const dir = mkdtempSync(join(tmpdir(), "polar-dash-"));
let demo: ReturnType<typeof Bun.spawn> | undefined;
let context: BrowserContext | undefined;
let nodeStack: NodeStack | undefined;
afterAll(async () => {
  await context?.close();
  await nodeStack?.stop();
  if (demo) {
    demo.kill("SIGINT");
    await Promise.race([demo.exited, Bun.sleep(30_000)]);
    demo.kill("SIGKILL");
  }
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Starts the cluster demo and resolves with its dashboard URL and admin token once its groups are done. */
async function startDemo(): Promise<{ url: string; token: string; rolloutToken: string }> {
  demo = Bun.spawn(["bun", join(ROOT, "bin/polar.ts"), "demo", "--cluster", "--keep", "--groups", "3", "--samples", "2", "--out", join(dir, "demo")], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = (demo.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  let url: string | undefined;
  let token: string | undefined;
  let rolloutToken: string | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the demo exited: ${text}`);
    text += new TextDecoder().decode(value);
    url ??= /polar demo: dashboard (\S+)\n/.exec(text)?.[1];
    token ??= /polar demo: admin token (\S+)\n/.exec(text)?.[1];
    rolloutToken ??= /polar demo: rollout token (\S+) /.exec(text)?.[1];
    if (/polar demo: done; still running/.test(text) && url && token && rolloutToken) break;
  }
  // Keep draining its output so it never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  return { url: url.replace(/\/$/, ""), token, rolloutToken };
}

const BROWSER_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

async function browserPage(): Promise<{ page: Page; pageErrors: string[] }> {
  context ??= await chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 1800 },
    args: BROWSER_ARGS,
  });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => void pageErrors.push(e.message));
  return { page, pageErrors };
}

async function connect(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.fill("#token", token);
  await page.click("#token-form button[type=submit]");
  await page.waitForFunction(() => document.getElementById("live")?.textContent === "live", null, { timeout: 30_000 });
}

const numbers = (page: Page, selector: string) => page.$$eval(selector, (els) => els.map((e) => e.textContent ?? ""));

test.skipIf(missing !== null)(
  `dashboard in headless chromium against polar demo --cluster${missing ? ` (skipped: ${missing})` : ""}`,
  async () => {
    const { url, token, rolloutToken } = await startDemo();
    const admin = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      return res.json();
    };

    const { page, pageErrors } = await browserPage();
    await connect(page, url, token);

    const snap = DashboardSnapshot.parse(await admin("/v1/admin/dashboard"));
    expect(snap.results.length).toBe(6);
    await page.waitForFunction((n) => document.getElementById("kpi-results")?.textContent === String(n), snap.results.length, { timeout: 30_000 });

    // Cluster table: one row per node, slots as the admin API reports them.
    const { nodes } = (await admin("/v1/admin/nodes")) as { nodes: { node_id: string; status: string; slots: number; assigned: number }[] };
    for (const n of nodes) {
      const cells = await numbers(page, `#nodes-table tr[data-node-id="${n.node_id}"] td`);
      expect(cells[1]).toBe(n.status);
      expect(cells[2]).toBe(`${n.assigned} / ${n.slots}`);
    }
    // Queue by state: the store's counts.
    const stats = (await admin("/v1/admin/stats")) as { rollouts_by_state: Record<string, number> };
    for (const [state, n] of Object.entries(stats.rollouts_by_state))
      expect(await page.textContent(`#queue-table tr[data-state="${state}"] td.num`)).toBe(String(n));
    // Trainer row: the demo's trainer, connected.
    expect((await numbers(page, "#trainers-table tbody td")).slice(0, 2)).toEqual(["demo-trainer", "yes"]);

    // Charts hold the admin API's numbers: every result counted once in throughput, the groups' mean rewards in order.
    const chartData = await page.evaluate(
      () => (window as unknown as { polarDashboard: { charts: { data: Record<string, (number | null)[][]> } } }).polarDashboard.charts.data,
    );
    const rolloutsPerMinute = chartData.throughput![1]! as number[];
    expect(rolloutsPerMinute.reduce((a, b) => a + b, 0) / 6).toBeCloseTo(snap.results.length, 9);
    const tokensPerMinute = chartData.throughput![2]! as number[];
    expect(tokensPerMinute.reduce((a, b) => a + b, 0) / 6).toBe(snap.results.reduce((a, r) => a + r.tokens.prompt + r.tokens.response, 0));
    expect(chartData.reward![1]).toEqual([...snap.groups].sort((a, b) => a.at - b.at).map((g) => g.mean_reward));
    const runP50 = (chartData["stage-p50"]![3]! as (number | null)[]).filter((v) => v !== null);
    expect(runP50.length).toBeGreaterThan(0);
    for (const v of runP50) expect(v!).toBeGreaterThan(0);

    // Solve-rate grid: each cell is the mean reward of that task's results started at that version.
    const expected = new Map<string, number[]>();
    for (const r of snap.results) {
      if (r.reward === null) continue;
      const key = `${r.task_id}|${r.policy_version_started}`;
      expected.set(key, [...(expected.get(key) ?? []), r.reward]);
    }
    const cells = await page.$$eval("#solve-grid td.cell", (tds) =>
      tds.map((td) => ({
        task: (td.parentElement as HTMLElement).dataset.task,
        version: (td as HTMLElement).dataset.version,
        mean: Number((td as HTMLElement).dataset.mean),
      })),
    );
    expect(cells.length).toBe(expected.size);
    for (const c of cells) {
      const rewards = expected.get(`${c.task}|${c.version}`)!;
      expect(c.mean).toBeCloseTo(rewards.reduce((a, b) => a + b, 0) / rewards.length, 9);
    }
    // The groups table lists every finished group.
    expect((await page.$$("#groups-table tbody tr")).length).toBe(snap.groups.length);

    // Live: a task submitted through the rollout API arrives over /events without a reload.
    const submitted = await fetch(`${url}/rollout/task/submit`, {
      method: "POST",
      headers: { authorization: `Bearer ${rolloutToken}`, "content-type": "application/json" },
      body: JSON.stringify({ task_id: "js-leap-year-century", agent: { harness: "mini" }, num_samples: 1 }),
    });
    expect(submitted.status).toBe(200);
    await page.waitForFunction((n) => document.getElementById("kpi-results")?.textContent === String(n), snap.results.length + 1, { timeout: 180_000 });
    await waitFor(
      async () => DashboardSnapshot.parse(await admin("/v1/admin/dashboard")).groups.length === snap.groups.length + 1,
      "the new group summarised",
      30_000,
    );
    await page.waitForFunction((n) => document.querySelectorAll("#groups-table tbody tr").length === n, snap.groups.length + 1, { timeout: 30_000 });
    const after = DashboardSnapshot.parse(await admin("/v1/admin/dashboard"));
    const newest = after.groups.at(-1)!;
    expect(await page.textContent(`#groups-table tr[data-group-id="${newest.group_id}"] td:nth-child(6)`)).toBe(String(Number(newest.mean_reward!.toFixed(2))));

    // Drill-down: the first group of the demo → its rollouts → one rollout's trajectory.
    const first = snap.groups[0]!;
    await page.click(`#groups-table tr[data-group-id="${first.group_id}"]`);
    const group = GroupDetail.parse(await admin(`/v1/admin/groups/${first.group_id}`));
    await page.waitForFunction((n) => document.querySelectorAll("#dd-rollouts tbody tr").length === n, group.rollouts.length);
    const rolloutId = group.rollouts[0]!.rollout_id;
    await page.click(`#dd-rollouts tr[data-rollout-id="${rolloutId}"]`);
    await page.waitForSelector("#dd-tokens .trace");
    const detail = RolloutDetail.parse(await admin(`/v1/admin/rollouts/${rolloutId}?group=${first.group_id}`));
    const traces = (detail.result!.trajectory as { traces: { response_ids: number[]; loss_mask: number[] }[] }).traces;
    const shownTrainable = traces.reduce((a, t) => a + t.loss_mask.slice(0, 3000).filter((m) => m === 1).length, 0);
    expect(await page.$$eval('#dd-tokens .tok[data-mask="1"]', (els) => els.length)).toBe(shownTrainable);
    expect(shownTrainable).toBeGreaterThan(0);
    expect(detail.messages!.length).toBeGreaterThan(1);
    expect(await page.$$eval("#dd-messages .msg", (els) => els.length)).toBe(detail.messages!.length);
    expect(await page.$$eval("#dd-timeline .span", (els) => els.map((e) => (e as HTMLElement).dataset.stage))).toEqual(detail.stages.map((s) => s.stage));

    expect(pageErrors).toEqual([]);
    // From the top, so the sticky header sits where it belongs in the full-page picture.
    await page.evaluate(() => (window as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    const png = await page.screenshot({ fullPage: true });
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    if (process.env.POLAR_UPDATE_SCREENSHOT === "1") await Bun.write(SCREENSHOT_DOCS, png);
  },
  600_000,
);

test.skipIf(missing !== null)(
  `a standalone node's own dashboard in headless chromium${missing ? ` (skipped: ${missing})` : ""}`,
  async () => {
    nodeStack = await startNodeStack({ runtime: "process", workers: { init: 2, run: 2, postrun: 1, ready_backlog: 1 }, sampling: { max_tokens_cap: 2048 } });
    const url = nodeStack.node.url;
    expect((await submit(url, { task_id: "py-csv-trailing-empty-field", agent: { harness: "mini" }, num_samples: 2 })).status).toBe(200);
    await pollTask(url, "py-csv-trailing-empty-field");
    const { page, pageErrors } = await browserPage();
    await connect(page, url, ADMIN_TOKEN);
    const snap = DashboardSnapshot.parse(await (await fetch(`${url}/v1/admin/dashboard`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json());
    expect(snap.results.length).toBe(2);
    await page.waitForFunction((n) => document.getElementById("kpi-results")?.textContent === String(n), 2);
    expect(await page.textContent("#service")).toContain(nodeStack.node.config.node_id);
    const cells = await numbers(page, `#nodes-table tr[data-node-id="${nodeStack.node.config.node_id}"] td`);
    expect(cells[1]).toBe("standalone");
    expect(cells[2]).toBe(`0 / ${snap.nodes[0]!.slots}`);
    // Its task is the group: open it, then a rollout's conversation and tokens.
    await page.click('#groups-table tr[data-group-id="py-csv-trailing-empty-field"]');
    await page.waitForFunction(() => document.querySelectorAll("#dd-rollouts tbody tr").length === 2);
    await page.click("#dd-rollouts tbody tr");
    await page.waitForSelector("#dd-tokens .trace");
    expect(await page.$$eval("#dd-messages .msg", (els) => els.length)).toBeGreaterThan(1);
    expect(await page.$$eval('#dd-tokens .tok[data-mask="1"]', (els) => els.length)).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  },
  300_000,
);
