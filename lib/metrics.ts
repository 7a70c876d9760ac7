// Why: both services expose Prometheus metrics produced by observers of their typed events; this
// small registry holds counters, gauges and histograms (cumulative `_bucket`s with `_sum` and
// `_count` under one `# TYPE`) and writes the text exposition format (version 0.0.4), so no
// service formats metric lines by hand.

type Labels = Record<string, string>;

/** Seconds: from a cache hit to an agent run of half an hour. */
export const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
/** Policy versions a rollout lags behind. */
export const STALENESS_BUCKETS = [0, 1, 2, 3, 4, 6, 8, 12, 16, 32];
/** Tokens of one LLM call or one rollout. */
export const TOKEN_BUCKETS = [16, 64, 256, 1024, 4096, 16384, 65536, 262144];

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  return entries.length === 0 ? "" : `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`;
}

/** Series keyed by their label values in the family's label order. */
class Series<T> {
  private readonly byKey = new Map<string, { labels: Labels; value: T }>();

  constructor(
    private readonly labelNames: readonly string[],
    private readonly initial: () => T,
  ) {}

  get(labels: Labels): { labels: Labels; value: T } {
    const ordered: Labels = {};
    for (const name of this.labelNames) {
      const value = labels[name];
      if (value === undefined) throw new Error(`metric label ${name} missing`);
      ordered[name] = value;
    }
    if (Object.keys(labels).length !== this.labelNames.length) throw new Error(`metric labels must be exactly ${this.labelNames.join(", ")}`);
    const key = this.labelNames.map((n) => ordered[n]).join("\u0000");
    let s = this.byKey.get(key);
    if (!s) this.byKey.set(key, (s = { labels: ordered, value: this.initial() }));
    return s;
  }

  delete(labels: Labels): void {
    this.byKey.delete(this.labelNames.map((n) => labels[n]).join("\u0000"));
  }

  all(): { labels: Labels; value: T }[] {
    return [...this.byKey.values()];
  }
}

interface Family {
  readonly name: string;
  render(): string[];
}

export class Counter implements Family {
  private readonly series: Series<{ v: number }>;

  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly string[],
  ) {
    this.series = new Series(labelNames, () => ({ v: 0 }));
  }

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0) || !Number.isFinite(by)) return;
    this.series.get(labels).value.v += by;
  }

  /** The current value (tests, the admin stats). */
  value(labels: Labels = {}): number {
    return this.series.get(labels).value.v;
  }

  render(): string[] {
    return [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} counter`,
      ...this.series.all().map((s) => `${this.name}${labelText(s.labels)} ${formatValue(s.value.v)}`),
    ];
  }
}

export class Gauge implements Family {
  private readonly series: Series<{ v: number }>;
  private collector: ((set: (labels: Labels, value: number) => void) => void) | null = null;

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
  ) {
    this.series = new Series(labelNames, () => ({ v: 0 }));
  }

  set(labels: Labels, value: number): void {
    this.series.get(labels).value.v = value;
  }

  add(labels: Labels, by: number): void {
    this.series.get(labels).value.v += by;
  }

  /** Forgets a series (a node that left, an image no longer warm). */
  remove(labels: Labels): void {
    this.series.delete(labels);
  }

  value(labels: Labels = {}): number {
    return this.series.get(labels).value.v;
  }

  /** Reads the values at scrape time instead (state the service holds anyway: queue depth, pool). */
  collect(collector: (set: (labels: Labels, value: number) => void) => void): this {
    this.collector = collector;
    return this;
  }

  render(): string[] {
    const head = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} gauge`];
    if (this.collector) {
      const fresh = new Series<{ v: number }>(this.labelNames, () => ({ v: 0 }));
      this.collector((labels, value) => void (fresh.get(labels).value.v = value));
      return [...head, ...fresh.all().map((s) => `${this.name}${labelText(s.labels)} ${formatValue(s.value.v)}`)];
    }
    return [...head, ...this.series.all().map((s) => `${this.name}${labelText(s.labels)} ${formatValue(s.value.v)}`)];
  }
}

interface HistogramState {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram implements Family {
  private readonly series: Series<HistogramState>;

  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {
    if (labelNames.includes("le")) throw new Error("le is reserved for histogram buckets");
    for (let i = 1; i < buckets.length; i++) if (!(buckets[i]! > buckets[i - 1]!)) throw new Error("histogram buckets must increase");
    this.series = new Series(labelNames, () => ({ counts: buckets.map(() => 0), sum: 0, count: 0 }));
  }

  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const s = this.series.get(labels).value;
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  /** Observations so far (tests). */
  count(labels: Labels = {}): number {
    return this.series.get(labels).value.count;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, value } of this.series.all()) {
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket${labelText({ ...labels, le: formatValue(le) })} ${value.counts[i]}`));
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${value.count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${formatValue(value.sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${value.count}`);
    }
    return lines;
  }
}

/**
 * A summary without quantiles: `_sum` and `_count` only, for durations reported already summed
 * (a node's heartbeat gives its calls' count and total latency, not each call).
 */
export class Summary implements Family {
  private readonly series: Series<{ sum: number; count: number }>;

  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly string[],
  ) {
    this.series = new Series(labelNames, () => ({ sum: 0, count: 0 }));
  }

  add(labels: Labels, sum: number, count: number): void {
    if (!Number.isFinite(sum) || !(count >= 0)) return;
    const s = this.series.get(labels).value;
    s.sum += sum;
    s.count += count;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} summary`];
    for (const { labels, value } of this.series.all()) {
      lines.push(`${this.name}_sum${labelText(labels)} ${formatValue(value.sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${value.count}`);
    }
    return lines;
  }
}

export class MetricsRegistry {
  private readonly families = new Map<string, Family>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(this.checked(name, "_total", labelNames), help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(this.checked(name, "", labelNames), help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Histogram {
    return this.add(new Histogram(this.checked(name, "", labelNames), help, labelNames, buckets));
  }

  summary(name: string, help: string, labelNames: readonly string[] = []): Summary {
    return this.add(new Summary(this.checked(name, "", labelNames), help, labelNames));
  }

  /** The text exposition format, families in registration order. */
  render(): string {
    return [...this.families.values()].flatMap((f) => f.render()).join("\n") + "\n";
  }

  private add<F extends Family>(family: F): F {
    this.families.set(family.name, family);
    return family;
  }

  private checked(name: string, suffix: string, labelNames: readonly string[]): string {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    if (suffix && !name.endsWith(suffix)) throw new Error(`counter ${name} must end in ${suffix}`);
    if (this.families.has(name)) throw new Error(`metric ${name} registered twice`);
    for (const l of labelNames) if (!LABEL.test(l) || l.startsWith("__")) throw new Error(`bad label name ${l}`);
    return name;
  }
}

/** `content-type` of the text format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
