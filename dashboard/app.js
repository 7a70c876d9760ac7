// Why: the dashboard's page logic — the admin token typed once (kept in this tab's
// sessionStorage), one snapshot from GET /v1/admin/dashboard, then the /events feed read with
// fetch (so the token travels in the Authorization header, never in a URL), every frame applied
// to the state and the views redrawn at most a few times a second. Nothing changes the cluster
// unless an operator confirms an action (drain a node, pause, resume).
import { Charts } from "./charts.js";
import { Drilldown } from "./drilldown.js";

const TOKEN_KEY = "polar_admin_token";
const $ = (id) => document.getElementById(id);

const state = {
  service: null,
  serviceId: null,
  policyVersion: 0,
  paused: false,
  queue: {},
  nodes: [],
  trainers: [],
  /** rollout id → active rollout */
  active: new Map(),
  results: [],
  groups: [],
  /** gateway latency samples: {at, calls, total_ms, max_ms} */
  latency: [],
  lastEventId: 0,
  live: false,
  frames: 0,
};
const charts = new Charts(document);
window.polarDashboard = { state, charts };

function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { authorization: `Bearer ${token()}`, "content-type": "application/json", ...(init.headers ?? {}) } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${path}: ${res.status} ${body?.error?.message ?? ""}`);
  return body;
}
api.service = null;

function showError(e) {
  $("error").textContent = e ? String(e.message ?? e) : "";
}

// ---- state --------------------------------------------------------------------------------------

function applySnapshot(s) {
  state.service = s.service;
  api.service = s.service;
  state.serviceId = s.service_id;
  state.policyVersion = s.policy_version;
  state.paused = s.paused;
  state.queue = s.queue;
  state.nodes = s.nodes;
  state.trainers = s.trainers;
  state.active = new Map(s.active.map((a) => [a.rollout_id, a]));
  state.results = s.results;
  state.groups = s.groups;
  state.lastEventId = s.last_event_id;
  if (s.service === "coordinator") state.latency = state.latency.filter((l) => l.at > Date.now() - 3600_000);
}

const TERMINAL = new Set(["COMPLETED", "ERROR", "TIMEOUT", "CANCELLED"]);
let refetching = null;

function applyFrame(f) {
  if (f.id !== null && f.id <= state.lastEventId) return;
  if (f.id !== null) state.lastEventId = f.id;
  state.frames++;
  const d = f.data;
  switch (f.type) {
    case "rollout.result":
      state.results.push(d);
      if (state.results.length > 5000) state.results.splice(0, state.results.length - 5000);
      break;
    case "group.summary":
      state.groups.push(d);
      break;
    case "task.created":
      // A node's sessions enter QUEUED without a transition; the coordinator announces each.
      if (state.service === "node") bump(state.queue, "QUEUED", (d.session_ids ?? []).length);
      for (const id of d.session_ids ?? []) state.active.set(id, queuedSession(id, d));
      break;
    case "session.state_changed": {
      const a = state.active.get(d.session_id) ?? queuedSession(d.session_id, d);
      if (d.from !== undefined) {
        if (d.from !== null) bump(state.queue, d.from, -1);
        bump(state.queue, d.state, 1);
      }
      a.state = d.state;
      a.stage = d.stage ?? a.stage;
      a.node_id = d.node_id ?? a.node_id;
      if (d.status === "REGISTERED" && a.policy_version_started === null) a.policy_version_started = state.policyVersion;
      if (TERMINAL.has(d.status)) state.active.delete(d.session_id);
      else state.active.set(d.session_id, a);
      break;
    }
    case "node.heartbeat": {
      const n = state.nodes.find((x) => x.node_id === d.node_id);
      if (n) Object.assign(n, { load: d.load, warm_sandboxes: d.warm_sandboxes, used: d.assigned, slots: d.slots });
      if (d.gateway && d.gateway.calls > 0) {
        state.latency.push({ at: Date.parse(f.ts), ...d.gateway });
        if (n) {
          n.gateway_mean_ms =
            (n.gateway_mean_ms ?? 0) * (n.gateway_calls / (n.gateway_calls + d.gateway.calls)) + d.gateway.total_ms / (n.gateway_calls + d.gateway.calls);
          n.gateway_calls += d.gateway.calls;
        }
      }
      break;
    }
    case "node.status":
      state.nodes = [d];
      state.queue = d.queue ?? state.queue;
      break;
    case "gateway.call":
      state.latency.push({ at: Date.parse(f.ts), calls: 1, total_ms: d.total_ms, max_ms: d.total_ms });
      break;
    case "node.joined":
    case "node.lost":
    case "node.state_changed":
    case "coordinator.restored":
      refetch();
      break;
    case "cluster.paused":
    case "gateway.paused":
      state.paused = true;
      break;
    case "cluster.pause_requested":
      state.paused = true;
      break;
    case "cluster.resumed":
    case "gateway.resumed":
      state.paused = false;
      state.policyVersion = d.policy_version ?? state.policyVersion;
      break;
    case "policy.version_advanced":
      state.policyVersion = d.to;
      break;
  }
  if (state.latency.length > 20000) state.latency.splice(0, state.latency.length - 20000);
  scheduleRender();
}

/** A session the page has just heard of (a node announces its sessions as QUEUED). */
function queuedSession(id, d) {
  return { rollout_id: id, group_id: d.group_id ?? d.task_id, task_id: d.task_id, state: "QUEUED", stage: null, node_id: null, policy_version_started: null };
}

function bump(obj, key, by) {
  obj[key] = Math.max(0, (obj[key] ?? 0) + by);
}

function refetch() {
  refetching ??= api("/v1/admin/dashboard")
    .then((s) => {
      const latency = state.latency;
      applySnapshot(s);
      state.latency = latency;
      scheduleRender();
    })
    .catch(showError)
    .finally(() => (refetching = null));
}

// ---- the feed -----------------------------------------------------------------------------------

let feedAbort = null;

async function connect() {
  feedAbort?.abort();
  const abort = new AbortController();
  feedAbort = abort;
  showError(null);
  let delay = 500;
  while (!abort.signal.aborted) {
    try {
      const res = await fetch("/events", {
        headers: { authorization: `Bearer ${token()}`, ...(state.lastEventId ? { "last-event-id": String(state.lastEventId) } : {}) },
        signal: abort.signal,
      });
      if (res.status === 401) throw Object.assign(new Error("the admin token was refused"), { final: true });
      if (!res.ok) throw new Error(`/events: ${res.status}`);
      // The snapshot after the feed is open: nothing falls between the two.
      applySnapshot(await api("/v1/admin/dashboard"));
      setLive(true);
      scheduleRender();
      delay = 500;
      await readFrames(res.body, applyFrame);
    } catch (e) {
      if (abort.signal.aborted) return;
      setLive(false);
      showError(e);
      if (e.final) return;
    }
    setLive(false);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 10_000);
  }
}

async function readFrames(body, onFrame) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id = null;
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) id = Number(line.slice(3).trim());
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length === 0) continue;
      const frame = JSON.parse(data.join("\n"));
      onFrame({ id, type: frame.type, ts: frame.ts, data: frame.data ?? {} });
    }
  }
}

function setLive(on) {
  state.live = on;
  $("live").textContent = on ? "live" : "offline";
  $("live").className = `pill ${on ? "on" : "off"}`;
  $("pause-btn").disabled = !on;
  $("resume-btn").disabled = !on;
}

// ---- views --------------------------------------------------------------------------------------

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  setTimeout(() => {
    renderQueued = false;
    render();
  }, 250);
}

const cell = (text, cls) => {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
};
const row = (cells) => {
  const tr = document.createElement("tr");
  tr.append(...cells);
  return tr;
};
const fmt = (v, digits = 2) => (v === null || v === undefined || Number.isNaN(v) ? "–" : String(Number(Number(v).toFixed(digits))));
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

function render() {
  $("service").textContent = state.service ? `${state.service} ${state.service === "node" ? state.serviceId : ""}` : "…";
  $("policy-version").textContent = String(state.policyVersion);
  $("paused").textContent = state.paused ? "paused" : "running";
  renderKpis();
  renderNodes();
  renderQueue();
  renderTrainers();
  charts.update(state);
  renderGrid();
  renderGroups();
  document.body.dataset.frames = String(state.frames);
}

function recent(ms) {
  const since = Date.now() - ms;
  return state.results.filter((r) => r.at >= since);
}

function renderKpis() {
  const last5 = recent(5 * 60_000);
  const span = Math.min(5, Math.max(1 / 6, (Date.now() - Math.min(...last5.map((r) => r.at), Date.now())) / 60_000));
  $("kpi-rpm").textContent = last5.length ? fmt(last5.length / span, 1) : "0";
  $("kpi-tpm").textContent = last5.length ? fmt(last5.reduce((a, r) => a + r.tokens.prompt + r.tokens.response, 0) / span, 0) : "0";
  const active = [...state.active.values()];
  $("kpi-active").textContent = String(active.length);
  const lags = active.filter((a) => a.policy_version_started !== null).map((a) => state.policyVersion - a.policy_version_started);
  $("kpi-stale-inflight-max").textContent = lags.length ? String(Math.max(...lags)) : "–";
  $("kpi-stale-inflight-mean").textContent = lags.length ? fmt(mean(lags)) : "–";
  const delivered = state.results
    .slice(-500)
    .map((r) => r.staleness)
    .filter((s) => s !== null);
  $("kpi-stale-delivered").textContent = delivered.length ? fmt(mean(delivered)) : "–";
  $("kpi-results").textContent = String(state.results.length);
  $("kpi-failures").textContent = String(state.results.filter((r) => r.failure_kind !== "none" && r.failure_kind !== "cancelled").length);
  const rewards = state.results
    .slice(-500)
    .map((r) => r.reward)
    .filter((r) => r !== null);
  $("kpi-reward").textContent = rewards.length ? fmt(mean(rewards)) : "–";
}

function renderNodes() {
  const tbody = document.querySelector("#nodes-table tbody");
  tbody.replaceChildren(
    ...state.nodes.map((n) => {
      const load = n.load ? `${n.load.queued} · ${n.load.init} · ${n.load.ready} · ${n.load.run} · ${n.load.postrun}` : "–";
      const warm =
        Object.entries(n.warm_sandboxes)
          .map(([image, k]) => `${image} ×${k}${n.starting_sandboxes?.[image] ? ` (+${n.starting_sandboxes[image]} starting)` : ""}`)
          .join(", ") || "none";
      const engines = n.engines.map((e) => `${e.url}${e.in_flight === null ? "" : ` (${e.in_flight})`}`).join(", ") || "–";
      const btn = document.createElement("button");
      btn.textContent = "drain";
      btn.disabled = n.status !== "connected";
      btn.onclick = () => drain(n.node_id);
      const actions = document.createElement("td");
      actions.append(btn);
      const tr = row([
        cell(n.node_id),
        cell(n.status),
        cell(`${n.used} / ${n.slots}`, "num slots"),
        cell(load),
        cell(warm, "warm"),
        cell(engines + (n.calls_in_flight === null ? "" : ` · ${n.calls_in_flight} in flight`)),
        cell(`${n.gateway_calls} · ${fmt(n.gateway_mean_ms, 1)} ms`),
        actions,
      ]);
      tr.dataset.nodeId = n.node_id;
      return tr;
    }),
  );
}

function renderQueue() {
  const tbody = document.querySelector("#queue-table tbody");
  tbody.replaceChildren(
    ...Object.entries(state.queue).map(([k, v]) => {
      const tr = row([cell(k), cell(String(v), "num")]);
      tr.dataset.state = k;
      return tr;
    }),
  );
}

function renderTrainers() {
  const tbody = document.querySelector("#trainers-table tbody");
  tbody.replaceChildren(
    ...state.trainers.map((t) =>
      row([
        cell(t.trainer_id),
        cell(t.connected ? "yes" : "no"),
        cell(String(t.credits), "num"),
        cell(String(t.unacked), "num"),
        cell(String(t.pending), "num"),
      ]),
    ),
  );
}

/** Mean measured reward per task and policy version (of the results started at it). */
export function solveGrid(results) {
  const tasks = new Map();
  const versions = new Set();
  for (const r of results) {
    if (r.reward === null || !r.task_id) continue;
    const v = r.policy_version_started ?? r.policy_version;
    versions.add(v);
    const byVersion = tasks.get(r.task_id) ?? new Map();
    const list = byVersion.get(v) ?? [];
    list.push(r.reward);
    byVersion.set(v, list);
    tasks.set(r.task_id, byVersion);
  }
  return { tasks, versions: [...versions].sort((a, b) => a - b) };
}

function renderGrid() {
  const { tasks, versions } = solveGrid(state.results);
  const table = $("solve-grid");
  const head = document.createElement("tr");
  head.append(cell("task"), ...versions.map((v) => Object.assign(document.createElement("th"), { textContent: `v${v}` })));
  table.tHead.replaceChildren(head);
  table.tBodies[0].replaceChildren(
    ...[...tasks.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([task, byVersion]) => {
        const tr = row([cell(task)]);
        tr.dataset.task = task;
        for (const v of versions) {
          const list = byVersion.get(v);
          const td = cell(list ? `${fmt(mean(list))} (${list.length})` : "", list ? "cell" : "empty");
          if (list) {
            const m = Math.max(0, Math.min(1, mean(list)));
            td.style.background = `hsl(${Math.round(m * 130)}, 60%, ${42 + (1 - m) * 8}%)`;
            td.dataset.version = String(v);
            td.dataset.mean = String(mean(list));
          }
          tr.append(td);
        }
        return tr;
      }),
  );
  const flat = state.groups
    .filter((g) => g.reward_std === 0 && g.rewards.length > 1)
    .slice(-50)
    .reverse();
  document
    .querySelector("#flat-groups tbody")
    .replaceChildren(...flat.map((g) => row([cell(g.group_id), cell(g.task_id), cell(String(g.n), "num"), cell(fmt(g.mean_reward), "num")])));
}

function renderGroups() {
  const tbody = document.querySelector("#groups-table tbody");
  const groups = state.groups.slice(-200).reverse();
  tbody.replaceChildren(
    ...groups.map((g) => {
      const tr = row([
        cell(g.group_id),
        cell(g.task_id),
        cell(g.status),
        cell(String(g.n), "num"),
        cell(g.rewards.map((r) => fmt(r)).join(" ")),
        cell(fmt(g.mean_reward), "num"),
        cell(fmt(g.reward_std), "num"),
        cell(`v${g.policy_version}`),
        cell(new Date(g.at).toLocaleTimeString()),
      ]);
      tr.dataset.groupId = g.group_id;
      tr.onclick = () => drilldown.openGroup(g.group_id).catch(showError);
      return tr;
    }),
  );
}

// ---- actions (confirmed) ------------------------------------------------------------------------

async function drain(nodeId) {
  if (!confirm(`Drain ${nodeId}? It finishes what it runs and takes no new work.`)) return;
  await api(state.service === "node" ? "/v1/admin/drain" : `/v1/admin/nodes/${encodeURIComponent(nodeId)}/drain`, { method: "POST" }).then(refetch, showError);
}

$("pause-btn").onclick = async () => {
  if (!confirm("Pause? LLM calls wait until resumed (a trainer's weight sync does this itself).")) return;
  await api("/v1/admin/pause", { method: "POST" }).then(refetch, showError);
};
$("resume-btn").onclick = async () => {
  if (!confirm(`Resume at policy version ${state.policyVersion}?`)) return;
  await api("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: state.policyVersion }) }).then(refetch, showError);
};

const drilldown = new Drilldown(api);
window.polarDashboard.drilldown = drilldown;

$("token").value = token();
$("token-form").onsubmit = (e) => {
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
  $("token").value = "";
  void connect();
};
setLive(false);
if (token()) void connect();
else showError("type the admin token to connect");
