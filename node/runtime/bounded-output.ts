// Why: a command's stdout and stderr are kept only up to a bound (agents print megabytes), with
// the rest counted, the same way for every runtime (docker's demultiplexed exec stream, host
// processes' pipes).
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Keeps the first `limit` bytes pushed into it and counts the rest. */
export class BoundedOutput {
  private readonly chunks: Uint8Array[] = [];
  private kept = 0;
  /** Set before the command's output starts (a reader is started before its command is known). */
  limit = DEFAULT_MAX_OUTPUT_BYTES;
  dropped = 0;

  push(chunk: Uint8Array): void {
    const room = Math.max(this.limit - this.kept, 0);
    if (room > 0) {
      const part = chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.dropped += chunk.length - Math.min(chunk.length, room);
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
