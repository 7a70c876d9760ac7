// Why: operators want a glance without curl — one static page that polls the admin stats and
// nodes with the admin token the operator types in (kept in the tab's session storage only).
export const DASHBOARD_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Polar coordinator</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}#err{color:#b00}</style></head>
<body><h1>Polar coordinator</h1>
<label>admin token <input id="token" type="password" size="40"></label> <button id="save">use</button> <span id="err"></span>
<h2>Stats</h2><table id="stats"></table><h2>Nodes</h2><table id="nodes"></table>
<script>
const $ = (id) => document.getElementById(id);
$("token").value = sessionStorage.getItem("polar_admin") || "";
$("save").onclick = () => { sessionStorage.setItem("polar_admin", $("token").value); tick(); };
const cell = (v) => { const td = document.createElement("td"); td.textContent = typeof v === "object" ? JSON.stringify(v) : String(v); return td; };
function fill(table, rows) { table.replaceChildren(...rows.map((r) => { const tr = document.createElement("tr"); r.forEach((v) => tr.append(cell(v))); return tr; })); }
async function get(path) { const r = await fetch(path, { headers: { authorization: "Bearer " + sessionStorage.getItem("polar_admin") } }); if (!r.ok) throw new Error(path + ": " + r.status); return r.json(); }
async function tick() {
  try {
    const stats = await get("/v1/admin/stats"); fill($("stats"), Object.entries(stats));
    const { nodes } = await get("/v1/admin/nodes");
    fill($("nodes"), [["node", "status", "assigned / slots", "load", "warm images"], ...nodes.map((n) => [n.node_id, n.status, n.assigned + " / " + n.slots, n.load, n.images_warm.join(", ")])]);
    $("err").textContent = "";
  } catch (e) { $("err").textContent = e.message; }
}
tick(); setInterval(tick, 2000);
</script></body></html>`;
