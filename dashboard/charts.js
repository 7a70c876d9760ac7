// Why: the dashboard's time series — throughput, stage durations (p50/p95), gateway latency,
// failure rate by kind, mean reward per group — computed in the page from the results and
// samples it holds, drawn with uPlot. Each chart's data stays readable (window.polarDashboard).

export const BUCKET_SECONDS = 10;
export const STAGES = ["queue", "init", "run", "postrun", "eval", "sandbox_start"];
export const FAILURE_KINDS = ["infrastructure", "agent", "evaluation", "capture"];
const COLORS = ["#2f6fd6", "#e07b39", "#1e8e5a", "#9b59b6", "#c0392b", "#16a2b8", "#7f8c8d"];

export function quantile(values, q) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Bucket start (s) of an epoch-ms time. */
const bucketOf = (ms) => Math.floor(ms / 1000 / BUCKET_SECONDS) * BUCKET_SECONDS;

/** Consecutive buckets from the first time given up to now (empty buckets included). */
function buckets(times) {
  if (times.length === 0) return [];
  const first = bucketOf(Math.min(...times));
  const last = Math.max(bucketOf(Math.max(...times)), bucketOf(Date.now()));
  const out = [];
  for (let t = first; t <= last; t += BUCKET_SECONDS) out.push(t);
  // uPlot cannot scale a time axis over one point: a second, empty bucket gives it a window.
  if (out.length === 1) out.push(first + BUCKET_SECONDS);
  return out.slice(-360);
}

export function seriesFrom(state) {
  const results = state.results;
  const xs = buckets(results.map((r) => r.at));
  const index = new Map(xs.map((t, i) => [t, i]));
  const perMinute = 60 / BUCKET_SECONDS;
  const rollouts = xs.map(() => 0);
  const tokens = xs.map(() => 0);
  const stageValues = Object.fromEntries(STAGES.map((s) => [s, xs.map(() => [])]));
  const failures = Object.fromEntries(FAILURE_KINDS.map((k) => [k, xs.map(() => 0)]));
  for (const r of results) {
    const i = index.get(bucketOf(r.at));
    if (i === undefined) continue;
    rollouts[i] += perMinute;
    tokens[i] += (r.tokens.prompt + r.tokens.response) * perMinute;
    for (const s of STAGES) if (r.stage_seconds[s] !== undefined) stageValues[s][i].push(r.stage_seconds[s]);
    if (failures[r.failure_kind]) failures[r.failure_kind][i] += 1;
  }
  const count = (i) => rollouts[i] / perMinute;
  const throughput = [xs, rollouts, tokens];
  const p50 = [xs, ...STAGES.map((s) => stageValues[s].map((v) => quantile(v, 0.5)))];
  const p95 = [xs, ...STAGES.map((s) => stageValues[s].map((v) => quantile(v, 0.95)))];
  const failureRate = [xs, ...FAILURE_KINDS.map((k) => failures[k].map((n, i) => (count(i) > 0 ? n / count(i) : null)))];

  const lxs = buckets(state.latency.map((l) => l.at));
  const lindex = new Map(lxs.map((t, i) => [t, i]));
  const lsum = lxs.map(() => 0);
  const lcount = lxs.map(() => 0);
  const lmax = lxs.map(() => null);
  for (const l of state.latency) {
    const i = lindex.get(bucketOf(l.at));
    if (i === undefined) continue;
    lsum[i] += l.total_ms;
    lcount[i] += l.calls;
    lmax[i] = Math.max(lmax[i] ?? 0, l.max_ms);
  }
  const latency = [lxs, lsum.map((s, i) => (lcount[i] > 0 ? s / lcount[i] : null)), lmax];

  const groups = state.groups.filter((g) => g.mean_reward !== null).sort((a, b) => a.at - b.at);
  const reward = [groups.map((g) => g.at / 1000), groups.map((g) => g.mean_reward)];
  if (groups.length === 1) reward.forEach((col, i) => col.push(i === 0 ? col[0] + BUCKET_SECONDS : null));
  return { throughput, "stage-p50": p50, "stage-p95": p95, latency, failures: failureRate, reward };
}

function opts(width, series, extra = {}) {
  return {
    width,
    height: 200,
    series: [{}, ...series.map((s, i) => ({ stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false, points: { show: true, size: 4 }, ...s }))],
    axes: [{}, { size: 50 }],
    legend: { live: false },
    ...extra,
    // A few buckets (or one) still get a sensible time window: half a bucket either side.
    scales: {
      ...(extra.scales ?? {}),
      x: {
        time: true,
        range: (_u, min, max) =>
          min === null || max === null ? [Date.now() / 1000 - 60, Date.now() / 1000] : [min - BUCKET_SECONDS / 2, max + BUCKET_SECONDS / 2],
      },
    },
  };
}

const CHARTS = {
  throughput: () => [{ label: "rollouts / min" }, { label: "tokens / min", scale: "tok" }],
  "stage-p50": () => STAGES.map((s) => ({ label: s })),
  "stage-p95": () => STAGES.map((s) => ({ label: s })),
  latency: () => [{ label: "mean" }, { label: "max" }],
  failures: () => FAILURE_KINDS.map((k) => ({ label: k })),
  reward: () => [{ label: "mean reward", paths: () => null, points: { show: true, size: 7 } }],
};

export class Charts {
  constructor(root) {
    this.root = root;
    this.plots = {};
    this.data = {};
  }

  update(state) {
    const all = seriesFrom(state);
    for (const [name, data] of Object.entries(all)) {
      this.data[name] = data;
      const el = this.root.getElementById(`chart-${name}`);
      if (!el || typeof uPlot === "undefined") continue;
      const width = Math.max(320, el.clientWidth || 460);
      if (!this.plots[name]) {
        const extra =
          name === "throughput" ? { axes: [{}, { size: 50 }, { scale: "tok", side: 1, size: 60, grid: { show: false } }], scales: { tok: {} } } : {};
        this.plots[name] = new uPlot(opts(width, CHARTS[name](), extra), data, el);
      } else {
        this.plots[name].setData(data);
      }
    }
  }
}
