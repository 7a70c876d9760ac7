// Why: `polar generate --accept 'reward >= 1 && turns <= 30'` decides which attempts become
// training rows. A user's expression must never run as code, so it is a small grammar — parsed
// once into a tree, type-checked against the attempt's named fields before any rollout runs,
// then evaluated per attempt:
//
//   expr       := and (("||" | "or") and)*
//   and        := unary (("&&" | "and") unary)*
//   unary      := ("!" | "not") unary | comparison
//   comparison := operand (("==" | "!=" | "<" | "<=" | ">" | ">=") operand)?
//   operand    := number | "string" | 'string' | true | false | null | field | "(" expr ")"
//
// Ordering compares numbers only; a field whose value is absent (null: no reward, no
// evaluation) makes every comparison false except `== null` / `!= null`.

export type FieldType = "number" | "string" | "boolean";
type Value = number | string | boolean | null;

/** The attempt fields an expression may name, with their types (any may be null). */
export const ACCEPT_FIELDS: Record<string, { type: FieldType; help: string }> = {
  reward: { type: "number", help: "the evaluator's reward (null: none, e.g. evaluator none)" },
  status: { type: "string", help: "COMPLETED | ERROR | TIMEOUT" },
  task_id: { type: "string", help: "the task's id" },
  sample_index: { type: "number", help: "0-based sample of the task" },
  harness: { type: "string", help: "the harness kind" },
  turns: { type: "number", help: "LLM calls the harness made (answered ones)" },
  traces: { type: "number", help: "rows the attempt gives (traces)" },
  tokens: { type: "number", help: "tokens of its rows (prompt + response; null when unknown)" },
  exit_code: { type: "number", help: "the harness's exit code (null: killed)" },
  agent_timed_out: { type: "boolean", help: "the harness ran over its time limit" },
  duration_s: { type: "number", help: "wall time of the rollout, seconds" },
  "evaluation.status": { type: "string", help: "resolved | unresolved | patch_failed | … (null: no evaluation)" },
  "fail_to_pass.passed": { type: "number", help: "FAIL_TO_PASS tests that passed" },
  "fail_to_pass.total": { type: "number", help: "FAIL_TO_PASS tests of the task" },
  "pass_to_pass.passed": { type: "number", help: "PASS_TO_PASS tests that passed" },
  "pass_to_pass.total": { type: "number", help: "PASS_TO_PASS tests of the task" },
};

export type AcceptFacts = Record<string, Value>;

type Node =
  | { kind: "literal"; value: Value; type: FieldType | "null" }
  | { kind: "field"; name: string; type: FieldType }
  | { kind: "not"; operand: Node }
  | { kind: "logic"; op: "and" | "or"; left: Node; right: Node }
  | { kind: "compare"; op: CompareOp; left: Node; right: Node };
type CompareOp = "==" | "!=" | "<" | "<=" | ">" | ">=";

export class AcceptError extends Error {}

interface Token {
  kind: "number" | "string" | "name" | "op" | "end";
  text: string;
  value?: Value;
  at: number;
}

const OPS = ["&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")"];
const MAX_LENGTH = 1000;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const op = OPS.find((o) => source.startsWith(o, i));
    if (op) {
      tokens.push({ kind: "op", text: op, at: i });
      i += op.length;
      continue;
    }
    const number = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?/.exec(source.slice(i));
    if (number) {
      tokens.push({ kind: "number", text: number[0], value: Number(number[0]), at: i });
      i += number[0].length;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const end = source.indexOf(ch, i + 1);
      if (end === -1) throw new AcceptError(`unterminated string at ${i + 1}`);
      tokens.push({ kind: "string", text: source.slice(i, end + 1), value: source.slice(i + 1, end), at: i });
      i = end + 1;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(source.slice(i));
    if (name) {
      tokens.push({ kind: "name", text: name[0], at: i });
      i += name[0].length;
      continue;
    }
    throw new AcceptError(`unexpected "${ch}" at ${i + 1}`);
  }
  tokens.push({ kind: "end", text: "end of expression", at: source.length });
  return tokens;
}

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private take(): Token {
    return this.tokens[this.index++]!;
  }

  private takeIf(...texts: string[]): Token | undefined {
    const t = this.peek();
    return (t.kind === "op" || t.kind === "name") && texts.includes(t.text) ? this.take() : undefined;
  }

  parse(): Node {
    const node = this.or();
    const rest = this.peek();
    if (rest.kind !== "end") throw new AcceptError(`unexpected "${rest.text}" at ${rest.at + 1}`);
    return node;
  }

  private or(): Node {
    let left = this.and();
    while (this.takeIf("||", "or")) left = logic("or", left, this.and());
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.takeIf("&&", "and")) left = logic("and", left, this.unary());
    return left;
  }

  private unary(): Node {
    if (this.takeIf("!", "not")) {
      const operand = this.unary();
      boolean(operand, "!");
      return { kind: "not", operand };
    }
    return this.comparison();
  }

  private comparison(): Node {
    const left = this.operand();
    const op = this.takeIf("==", "!=", "<", "<=", ">", ">=");
    if (!op) return left;
    return compare(op.text as CompareOp, left, this.operand());
  }

  private operand(): Node {
    const t = this.take();
    if (t.kind === "number") return { kind: "literal", value: t.value!, type: "number" };
    if (t.kind === "string") return { kind: "literal", value: t.value!, type: "string" };
    if (t.kind === "op" && t.text === "(") {
      const inner = this.or();
      if (!this.takeIf(")")) throw new AcceptError(`expected ")" at ${this.peek().at + 1}`);
      return inner;
    }
    if (t.kind === "name") {
      if (t.text === "true" || t.text === "false") return { kind: "literal", value: t.text === "true", type: "boolean" };
      if (t.text === "null") return { kind: "literal", value: null, type: "null" };
      const field = ACCEPT_FIELDS[t.text];
      if (!field) throw new AcceptError(`unknown field "${t.text}" (known: ${Object.keys(ACCEPT_FIELDS).join(", ")})`);
      return { kind: "field", name: t.text, type: field.type };
    }
    throw new AcceptError(`expected a value at ${t.at + 1}, got "${t.text}"`);
  }
}

function typeOf(node: Node): FieldType | "null" {
  switch (node.kind) {
    case "literal":
    case "field":
      return node.type;
    default:
      return "boolean";
  }
}

function boolean(node: Node, where: string): void {
  if (typeOf(node) !== "boolean") throw new AcceptError(`"${where}" needs a true/false value, not a ${typeOf(node)}`);
}

function logic(op: "and" | "or", left: Node, right: Node): Node {
  boolean(left, op);
  boolean(right, op);
  return { kind: "logic", op, left, right };
}

function compare(op: CompareOp, left: Node, right: Node): Node {
  const [a, b] = [typeOf(left), typeOf(right)];
  if (op === "==" || op === "!=") {
    if (a !== b && a !== "null" && b !== "null") throw new AcceptError(`cannot compare a ${a} with a ${b} ("${op}")`);
  } else if (a !== "number" || b !== "number") {
    throw new AcceptError(`"${op}" compares numbers, not a ${a === "number" ? b : a}`);
  }
  return { kind: "compare", op, left, right };
}

function evaluate(node: Node, facts: AcceptFacts): Value {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "field":
      return facts[node.name] ?? null;
    case "not":
      return evaluate(node.operand, facts) !== true;
    case "logic": {
      const left = evaluate(node.left, facts) === true;
      if (node.op === "and") return left && evaluate(node.right, facts) === true;
      return left || evaluate(node.right, facts) === true;
    }
    case "compare": {
      const a = evaluate(node.left, facts);
      const b = evaluate(node.right, facts);
      if (node.op === "==") return a === b;
      if (node.op === "!=") return a !== b;
      if (typeof a !== "number" || typeof b !== "number") return false;
      if (node.op === "<") return a < b;
      if (node.op === "<=") return a <= b;
      if (node.op === ">") return a > b;
      return a >= b;
    }
  }
}

export interface AcceptRule {
  source: string;
  accepts(facts: AcceptFacts): boolean;
}

/** Parses and type-checks an expression; an AcceptError names what is wrong and where. */
export function parseAccept(source: string): AcceptRule {
  if (source.length > MAX_LENGTH) throw new AcceptError(`longer than ${MAX_LENGTH} characters`);
  const tree = new Parser(tokenize(source)).parse();
  boolean(tree, "the expression");
  return { source, accepts: (facts) => evaluate(tree, facts) === true };
}
