// Why: from a group to its rollouts to one rollout — its stages laid out on a time line, the
// states the service saw it enter, its conversation, and its tokens with the loss mask and the
// sampled tokens' probabilities shaded — read from the admin API when asked for.

const STAGE_COLORS = {
  init: "#7f8c8d",
  ready_queue: "#bdc3c7",
  run: "#2f6fd6",
  postrun_queue: "#bdc3c7",
  postrun: "#1e8e5a",
  sandbox_start: "#34495e",
  agent_exec: "#1b4f9c",
  eval: "#0e6b41",
};
/** Tokens drawn per trace (the rest are counted). */
const MAX_TOKENS = 3000;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "style") node.setAttribute("style", v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

const fmt = (v, digits = 2) => (v === null || v === undefined ? "–" : typeof v === "number" ? String(Number(v.toFixed(digits))) : String(v));

export class Drilldown {
  constructor(api) {
    this.api = api;
    this.section = document.getElementById("drilldown");
    document.getElementById("dd-close").onclick = () => this.close();
  }

  close() {
    this.section.hidden = true;
    this.groupId = null;
  }

  async openGroup(groupId) {
    this.groupId = groupId;
    const group = await this.api(`/v1/admin/${this.api.service === "node" ? "tasks" : "groups"}/${encodeURIComponent(groupId)}`);
    this.section.hidden = false;
    document.getElementById("dd-group-id").textContent = `${group.group_id} · ${group.task_id} · ${group.state}`;
    document.getElementById("dd-rollout").hidden = true;
    const tbody = document.querySelector("#dd-rollouts tbody");
    tbody.replaceChildren(
      ...group.rollouts.map((r) => {
        const tr = el(
          "tr",
          { "data-rollout-id": r.rollout_id },
          el("td", {}, r.rollout_id),
          el("td", {}, r.state),
          el("td", {}, r.node_id ?? "–"),
          el("td", { class: "num" }, String(r.attempt)),
          el("td", {}, r.status ?? "–"),
          el("td", { class: "num" }, fmt(r.reward)),
          el("td", {}, r.failure_kind ?? "–"),
        );
        tr.onclick = () => {
          for (const row of tbody.children) row.classList.toggle("selected", row === tr);
          void this.openRollout(r.rollout_id, group.group_id);
        };
        return tr;
      }),
    );
    this.section.scrollIntoView({ block: "start" });
    return group;
  }

  async openRollout(rolloutId, groupId) {
    const d = await this.api(`/v1/admin/rollouts/${encodeURIComponent(rolloutId)}${groupId ? `?group=${encodeURIComponent(groupId)}` : ""}`);
    const panel = document.getElementById("dd-rollout");
    panel.hidden = false;
    document.getElementById("dd-rollout-id").textContent = `${d.rollout_id} · ${d.state}${d.node_id ? ` on ${d.node_id}` : ""}`;
    this.renderTimeline(d.stages);
    document.getElementById("dd-steps").textContent = d.timeline.length
      ? d.timeline.map((s) => `${new Date(s.at).toLocaleTimeString()} ${s.state}${s.node_id ? ` (${s.node_id})` : ""}`).join(" → ")
      : "";
    this.renderMessages(d.messages);
    this.renderTokens(d.result);
    return d;
  }

  renderTimeline(stages) {
    const box = document.getElementById("dd-timeline");
    const total = Math.max(1, ...stages.map((s) => s.start_ms + s.duration_ms));
    const outer = new Set(["init", "ready_queue", "run", "postrun_queue", "postrun"]);
    box.replaceChildren(
      ...stages.map((s) =>
        el(
          "div",
          {
            class: `span${outer.has(s.stage) ? "" : " inner"}`,
            "data-stage": s.stage,
            title: `${s.stage}: ${(s.duration_ms / 1000).toFixed(2)} s`,
            style: `left:${(100 * s.start_ms) / total}%;width:${Math.max(0.3, (100 * s.duration_ms) / total)}%;background:${STAGE_COLORS[s.stage] ?? "#999"}`,
          },
          outer.has(s.stage) ? `${s.stage} ${(s.duration_ms / 1000).toFixed(1)}s` : "",
        ),
      ),
    );
  }

  renderMessages(messages) {
    const box = document.getElementById("dd-messages");
    if (!messages) {
      box.replaceChildren(el("p", { class: "note" }, "No conversation was reported with this result."));
      return;
    }
    box.replaceChildren(
      ...messages.map((m) => el("div", { class: `msg ${m.role}` }, el("b", {}, m.role), el("pre", {}, m.content + (m.truncated ? " …" : "")))),
    );
  }

  renderTokens(result) {
    const box = document.getElementById("dd-tokens");
    const traces = result?.trajectory?.traces ?? [];
    if (traces.length === 0) {
      box.replaceChildren(el("p", { class: "note" }, result ? "This result has no traces." : "Still running."));
      return;
    }
    const parts = [];
    traces.forEach((t, i) => {
      const trainable = t.loss_mask.filter((m) => m === 1).length;
      parts.push(
        el(
          "div",
          { class: "trace-head" },
          `trace ${i + 1}: ${t.prompt_ids.length} prompt + ${t.response_ids.length} response tokens, ${trainable} trainable · reward ${fmt(t.reward)}`,
        ),
      );
      const line = el("div", { class: "trace", "data-trace": String(i) });
      const promptShown = Math.min(t.prompt_ids.length, 64);
      for (let k = 0; k < promptShown; k++) line.append(el("span", { class: "tok prompt", title: `prompt token ${t.prompt_ids[k]}` }, String(t.prompt_ids[k])));
      if (promptShown < t.prompt_ids.length) line.append(el("span", { class: "tok prompt" }, `… ${t.prompt_ids.length - promptShown} more prompt tokens`));
      const n = Math.min(t.response_ids.length, MAX_TOKENS);
      for (let k = 0; k < n; k++) {
        const masked = t.loss_mask[k] === 1;
        const lp = t.response_logprobs?.[k];
        const p = masked && typeof lp === "number" ? Math.exp(lp) : 0;
        line.append(
          el(
            "span",
            masked
              ? {
                  class: "tok tr",
                  style: `--p:${p.toFixed(3)}`,
                  title: `id ${t.response_ids[k]} · logprob ${lp} · p ${p.toFixed(3)} · trainable`,
                  "data-mask": "1",
                }
              : { class: "tok ctx", title: `id ${t.response_ids[k]} · context, not trained`, "data-mask": "0" },
            String(t.response_ids[k]),
          ),
        );
      }
      if (n < t.response_ids.length) line.append(el("span", { class: "tok prompt" }, `… ${t.response_ids.length - n} more`));
      parts.push(line);
    });
    box.replaceChildren(...parts);
  }
}
