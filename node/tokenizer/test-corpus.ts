// Why: one varied corpus shared by the equality test and the speed benchmark, so "identical to
// the reference tokenizer" and "faster than it" are claims about the same text.

const CODE = `import { readFile } from "node:fs/promises";

export async function main(argv: string[]): Promise<number> {
\tconst [path = "README.md"] = argv;
\tconst text = await readFile(path, "utf8");
\tfor (let i = 0; i < 10; i++) console.log(\`line \${i}: \${text.length}\`);
\treturn text.split(/\\r?\\n/).filter((l) => l.trim() !== "").length;
}

def fib(n):
    """Return the n-th Fibonacci number."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
`;

const RENDERED_CHAT =
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nList files<|im_end|>\n" +
  "<|im_start|>assistant\n<think>\nThe user wants ls.\n</think>\n\n<tool_call>\n" +
  '{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call><|im_end|>\n' +
  "<|im_start|>user\n<tool_response>\ntotal 0\n</tool_response><|im_end|>\n<|im_start|>assistant\n";

/** Small, diverse texts: every one must tokenize identically to the reference. */
export const TOKENIZER_CORPUS: readonly string[] = [
  "",
  "Hello, world!",
  "  leading and trailing spaces  ",
  "tabs\tand\t\ttabs\n\n\nand newlines\r\n\r\nwindows",
  "     \n     \n\n\t\t  ",
  "numbers 1 12 123 1234 12345 3.14159 -42 1e10 0x1F 1,000,000",
  "Unicode: café naïve résumé Ångström ﬁ ligature ½ ™",
  "CJK: 你好，世界！日本語のテキスト。한국어 텍스트입니다。",
  "Emoji: 😀👍🏽👨‍👩‍👧‍👦 🇫🇷 ❤️ ✨",
  "Combining: e\u0301 a\u0308 n\u0303 (decomposed forms, NFC changes them)",
  "Arabic مرحبا بالعالم and Hebrew שלום עולם and Thai สวัสดีครับ",
  "Contractions: I'm you're they've we'll she'd it's DON'T I'M",
  "Special tokens inline: <|im_start|>user\nhi<|im_end|> <|endoftext|> <think></think> <tool_call>x</tool_call>",
  "Special token with a combining overlay: <think>\u0338 and <\u0338 end",
  "Near-special text: <|im_star|> <think > < think> </ think> <|IM_END|>",
  'JSON: {"name": "bash", "arguments": {"command": "echo hello > out.txt", "timeout": 30}}',
  "URLs https://example.com/path?query=1&b=2#frag and emails someone@example.org",
  "Markdown **bold** _italic_ `code` \n- item\n- item\n\n| a | b |\n|---|---|\n",
  "Repeated punctuation!!!??? ... --- === *** ~~~ ### $$$",
  "Control chars \u0000 \u0001 \u007f and zero-width \u200b\u200c\u200d and BOM \ufeff",
  "Astral: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕏 𐍈 and lone-ish symbols ☃ ☂",
  CODE,
  RENDERED_CHAT,
];

/** ~`targetBytes` of mixed text built from the corpus (deterministic), for the benchmark. */
export function mixedText(targetBytes: number): string {
  const parts: string[] = [];
  let bytes = 0;
  for (let round = 0; bytes < targetBytes; round++) {
    for (const item of TOKENIZER_CORPUS) {
      const piece = `${item} [${round}]\n`;
      parts.push(piece);
      bytes += Buffer.byteLength(piece);
    }
  }
  return parts.join("");
}
