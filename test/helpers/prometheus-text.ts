// Why: tests read /metrics the way Prometheus does — a strict parser of the text exposition
// format (0.0.4) that rejects what a scraper would (a sample before its # TYPE, a family split
// in two, a repeated label, a malformed value, histogram buckets that are not cumulative or lack
// +Inf), so a test asserting on a parsed value also proves the page is valid.

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(text: string, line: number): number {
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1; // after "{"
  for (;;) {
    while (text[i] === " ") i++;
    if (text[i] === "}") return { labels, rest: text.slice(i + 1) };
    const m = LABEL_NAME.exec(text.slice(i));
    if (!m) throw new Error(`line ${line}: bad label name at ${text.slice(i)}`);
    const name = m[0];
    i += name.length;
    if (text[i] !== "=" || text[i + 1] !== '"') throw new Error(`line ${line}: expected ="…" after ${name}`);
    i += 2;
    let value = "";
    for (;;) {
      const ch = text[i];
      if (ch === undefined) throw new Error(`line ${line}: unterminated label value`);
      if (ch === '"') break;
      if (ch === "\\") {
        const next = text[i + 1];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape \\${next}`);
        i += 2;
        continue;
      }
      if (ch === "\n") throw new Error(`line ${line}: newline in label value`);
      value += ch;
      i++;
    }
    i++;
    if (name in labels) throw new Error(`line ${line}: label ${name} repeated`);
    labels[name] = value;
    while (text[i] === " ") i++;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new Error(`line ${line}: expected , or } in labels`);
  }
}

function familyOf(sampleName: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const f = families.get(sampleName.slice(0, -suffix.length));
    if (f && (f.type === "histogram" || f.type === "summary") && !(suffix === "_bucket" && f.type === "summary")) return f;
  }
  return undefined;
}

/** Parses the exposition text; throws on anything a scraper would refuse. */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families = new Map<string, MetricFamily>();
  const closed = new Set<string>();
  let current: MetricFamily | null = null;
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((raw, index) => {
    const n = index + 1;
    if (raw.trim() === "") return;
    if (raw.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name, rest = ""] = m as unknown as [string, string, string, string?];
      if (!NAME.test(name) || NAME.exec(name)![0] !== name) throw new Error(`line ${n}: bad metric name ${name}`);
      let family = families.get(name);
      if (family && closed.has(name)) throw new Error(`line ${n}: family ${name} appears twice`);
      if (!family) {
        if (current) closed.add(current.name);
        family = { name, type: "untyped", help: null, samples: [] };
        families.set(name, family);
        current = family;
      }
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`line ${n}: bad type ${rest}`);
        if (family.samples.length > 0) throw new Error(`line ${n}: # TYPE ${name} after its samples`);
        if (family.type !== "untyped") throw new Error(`line ${n}: second # TYPE for ${name}`);
        family.type = rest as MetricType;
      } else {
        if (family.help !== null) throw new Error(`line ${n}: second # HELP for ${name}`);
        family.help = rest;
      }
      return;
    }
    const nm = NAME.exec(raw);
    if (!nm) throw new Error(`line ${n}: bad sample line ${raw}`);
    const name = nm[0];
    let rest = raw.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, n));
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2 || parts[0] === "") throw new Error(`line ${n}: expected a value (and a timestamp) after ${name}`);
    const value = parseValue(parts[0]!, n);
    let family = familyOf(name, families);
    if (!family) {
      if (current) closed.add(current.name);
      family = { name, type: "untyped", help: null, samples: [] };
      families.set(name, family);
      current = family;
    }
    if (family !== current) throw new Error(`line ${n}: sample ${name} outside its family's block`);
    if (family.type === "counter" && !(value >= 0)) throw new Error(`line ${n}: counter ${name} is ${value}`);
    family.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function checkHistogram(f: MetricFamily): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? groups.set(key, { buckets: [] }).get(key)!;
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      g.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else if (s.name === `${f.name}_count`) g.count = s.value;
    else throw new Error(`${f.name}: stray sample ${s.name}`);
  }
  for (const [key, g] of groups) {
    if (g.sum === undefined || g.count === undefined) throw new Error(`${f.name}${key}: _sum and _count required`);
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (last[1] !== g.count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} ≠ _count ${g.count}`);
    for (let i = 1; i < g.buckets.length; i++) {
      if (!(g.buckets[i]![0] > g.buckets[i - 1]![0])) throw new Error(`${f.name}${key}: le not increasing`);
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
  }
}

/** The value of one sample (exact label match); undefined when absent. */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return undefined;
}

/** Sum over every sample of `name` whose labels include `match`. */
export function sampleSum(families: Map<string, MetricFamily>, name: string, match: Record<string, string> = {}): number {
  let total = 0;
  for (const f of families.values())
    for (const s of f.samples) if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) total += s.value;
  return total;
}
