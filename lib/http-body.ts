// Why: a JSON body is refused before any parsing work when it is too large (declared or streamed)
// or nested too deep; the gateway and the rollout API on both services read bodies this way.
export { exceedsJsonDepth } from "./json-depth.ts";

/**
 * The body text, or null when it has more than `maxBytes`: a declared length is checked before
 * reading (the HTTP framing then guarantees it), a chunked body is counted chunk by chunk and
 * cancelled as soon as it passes the limit, so neither is ever held in memory whole.
 */
export async function readLimitedText(request: Request, maxBytes: number): Promise<string | null> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > maxBytes) return null;
    return request.text();
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
