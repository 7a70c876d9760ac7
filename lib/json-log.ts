// Why: services log for operators as one JSON object per line (what happened, ids, counts —
// never payloads), written to a sink that tests replace to read the lines back parsed.

/** Where log lines go, each one JSON text: stderr by default, a capturing function in tests. */
export type LogSink = (jsonLine: string) => void;

export const stderrLogSink: LogSink = (jsonLine) => {
  process.stderr.write(`${jsonLine}\n`);
};

export type LogLevel = "info" | "warn" | "error";

/** Writes `{ts, level, event, ...fields}` as one line. */
export function writeLogLine(sink: LogSink, level: LogLevel, event: string, fields: Record<string, unknown>): void {
  sink(JSON.stringify({ ts: new Date().toISOString(), level, event, ...fields }));
}
