import { describe, expect, test } from "bun:test";
import { parsePrometheusText, sampleValue } from "../test/helpers/prometheus-text.ts";
import { MetricsRegistry } from "./metrics.ts";

describe("metrics registry", () => {
  test("counters, gauges, histograms and summaries render as valid exposition text with known values", () => {
    const r = new MetricsRegistry();
    const calls = r.counter("polar_test_calls_total", "Calls.", ["code"]);
    const depth = r.gauge("polar_test_depth", "Depth.");
    const warm = r.gauge("polar_test_warm", "Warm per image.", ["image"]).collect((set) => {
      set({ image: 'a"b\\c\nd' }, 2);
      set({ image: "x" }, 0);
    });
    const h = r.histogram("polar_test_duration_seconds", "Durations.", ["stage"], [0.1, 1, 10]);
    const s = r.summary("polar_test_latency_seconds", "Latency.", ["node"]);
    calls.inc({ code: "ok" });
    calls.inc({ code: "ok" }, 2);
    calls.inc({ code: "timeout" });
    calls.inc({ code: "ok" }, -5); // a counter never goes down
    depth.set({}, 7);
    h.observe({ stage: "run" }, 0.05);
    h.observe({ stage: "run" }, 0.5);
    h.observe({ stage: "run" }, 50);
    h.observe({ stage: "init" }, 1);
    s.add({ node: "n1" }, 1.5, 3);
    void warm;

    const parsed = parsePrometheusText(r.render());
    expect(parsed.get("polar_test_calls_total")!.type).toBe("counter");
    expect(sampleValue(parsed, "polar_test_calls_total", { code: "ok" })).toBe(3);
    expect(sampleValue(parsed, "polar_test_calls_total", { code: "timeout" })).toBe(1);
    expect(sampleValue(parsed, "polar_test_depth")).toBe(7);
    expect(sampleValue(parsed, "polar_test_warm", { image: 'a"b\\c\nd' })).toBe(2);
    const hist = parsed.get("polar_test_duration_seconds")!;
    expect(hist.type).toBe("histogram");
    expect(sampleValue(parsed, "polar_test_duration_seconds_bucket", { stage: "run", le: "0.1" })).toBe(1);
    expect(sampleValue(parsed, "polar_test_duration_seconds_bucket", { stage: "run", le: "1" })).toBe(2);
    expect(sampleValue(parsed, "polar_test_duration_seconds_bucket", { stage: "run", le: "10" })).toBe(2);
    expect(sampleValue(parsed, "polar_test_duration_seconds_bucket", { stage: "run", le: "+Inf" })).toBe(3);
    expect(sampleValue(parsed, "polar_test_duration_seconds_sum", { stage: "run" })).toBeCloseTo(50.55);
    expect(sampleValue(parsed, "polar_test_duration_seconds_count", { stage: "init" })).toBe(1);
    expect(parsed.get("polar_test_latency_seconds")!.type).toBe("summary");
    expect(sampleValue(parsed, "polar_test_latency_seconds_count", { node: "n1" })).toBe(3);
  });

  test("names and labels are checked when registered and when used", () => {
    const r = new MetricsRegistry();
    expect(() => r.counter("polar_bad", "no _total")).toThrow();
    expect(() => r.gauge("9bad", "bad name")).toThrow();
    r.gauge("polar_ok", "ok", ["a"]);
    expect(() => r.gauge("polar_ok", "again")).toThrow();
    expect(() => r.histogram("polar_h", "h", ["le"], [1])).toThrow();
    expect(() => r.histogram("polar_h2", "h", [], [2, 1])).toThrow();
    const c = r.counter("polar_c_total", "c", ["a"]);
    expect(() => c.inc({})).toThrow();
    expect(() => c.inc({ a: "1", b: "2" })).toThrow();
  });
});

describe("the test parser refuses what a scraper refuses", () => {
  const bad: [string, string][] = [
    ["sample before TYPE", "x 1\n# TYPE x counter\n"],
    ["family split", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n"],
    ["repeated label", '# TYPE a gauge\na{x="1",x="2"} 1\n'],
    ["bad value", "# TYPE a gauge\na one\n"],
    ["no +Inf bucket", '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
    ["not cumulative", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'],
    ["negative counter", "# TYPE c_total counter\nc_total -1\n"],
    ["no final newline", "# TYPE a gauge\na 1"],
  ];
  for (const [what, text] of bad) test(what, () => expect(() => parsePrometheusText(text)).toThrow());
});
