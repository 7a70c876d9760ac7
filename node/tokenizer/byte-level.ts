// Why: HuggingFace byte-level BPE vocabularies spell raw bytes as printable unicode characters
// (GPT-2's bytes_to_unicode table); tiktoken wants the raw bytes, so the two must be mapped.

/** byte value → the unicode character that spells it in a byte-level vocabulary. */
function buildByteToChar(): string[] {
  const printable: number[] = [];
  const add = (from: number, to: number) => {
    for (let b = from; b <= to; b++) printable.push(b);
  };
  add(0x21, 0x7e); // '!'..'~'
  add(0xa1, 0xac); // '¡'..'¬'
  add(0xae, 0xff); // '®'..'ÿ'
  const table: string[] = new Array(256);
  for (const b of printable) table[b] = String.fromCharCode(b);
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    if (table[b] === undefined) table[b] = String.fromCharCode(256 + shifted++);
  }
  return table;
}

const BYTE_TO_CHAR = buildByteToChar();
const CHAR_TO_BYTE = new Map<string, number>(BYTE_TO_CHAR.map((ch, b) => [ch, b]));

/** Raw bytes of a byte-level token string (e.g. "Ġhello" → " hello" as bytes). */
export function byteLevelToBytes(token: string): Uint8Array {
  const out = new Uint8Array(token.length);
  let i = 0;
  for (const ch of token) {
    const b = CHAR_TO_BYTE.get(ch);
    if (b === undefined) throw new Error(`not a byte-level token: ${JSON.stringify(token)}`);
    out[i++] = b;
  }
  return out.subarray(0, i);
}
