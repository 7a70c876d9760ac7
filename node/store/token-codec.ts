// Why: token ids and logprobs are the bulk of what a node stores; packing them as little-endian
// binary keeps a 100k-token prompt at 400 KB instead of ~700 KB of JSON text, and exact.

/**
 * Token ids as the gateway holds them: an array, or a Uint32Array (what the chat backends parse an
 * answer's prompt ids into, 4 bytes an id, sharing one buffer across a session's calls).
 */
export type TokenIdList = readonly number[] | Uint32Array;

/** Little-endian hosts pack a Uint32Array as its own bytes. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The ids packed as uint32 little-endian; a Uint32Array's are its own bytes (a view, not a copy). */
export function encodeIds(ids: TokenIdList): Buffer {
  if (ids instanceof Uint32Array && LITTLE_ENDIAN) return Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const buf = Buffer.allocUnsafe(ids.length * 4);
  for (let i = 0; i < ids.length; i++) buf.writeUInt32LE(ids[i]!, i * 4);
  return buf;
}

export function decodeIds(buf: Uint8Array): number[] {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new Array<number>(buf.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

/** Logprobs keep full double precision: a trainer's importance ratios must see what the engine sent. */
export function encodeFloats(values: readonly number[]): Buffer {
  const buf = Buffer.allocUnsafe(values.length * 8);
  for (let i = 0; i < values.length; i++) buf.writeDoubleLE(values[i]!, i * 8);
  return buf;
}

export function decodeFloats(buf: Uint8Array): number[] {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new Array<number>(buf.byteLength / 8);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/**
 * Length of the longest common prefix of `head[0, headLen)` followed by `tail` with `ids`,
 * without building the concatenation.
 */
export function concatPrefixLength(head: TokenIdList, tail: TokenIdList, ids: TokenIdList, headLen = head.length): number {
  const inBoth = Math.min(headLen, ids.length);
  let inHead = 0;
  while (inHead < inBoth && head[inHead] === ids[inHead]) inHead++;
  if (inHead < headLen) return inHead;
  const n = Math.min(tail.length, ids.length - inHead);
  let i = 0;
  while (i < n && tail[i] === ids[inHead + i]) i++;
  return inHead + i;
}
