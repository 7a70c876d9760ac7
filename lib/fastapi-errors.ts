// Why: Polar's rollout server is FastAPI over pydantic, and trainer integrations read its 422
// bodies; this module makes a zod schema accept what pydantic's lax mode accepts (numeric and
// boolean strings where a number or boolean is due) and words every refusal as FastAPI does —
// `detail: [{type, loc, msg, input, ctx?}]` with `loc` starting at "body" — in one place.
import { z } from "zod";

export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export type PydanticParse<T> = { ok: true; data: T } | { ok: false; detail: ValidationDetail[] };

/** A 422 with one detail entry (checks made after the schema, e.g. agent.harness). */
export function fieldError(
  loc: (string | number)[],
  msg: string,
  type = "value_error",
  extra: { input?: unknown; ctx?: Record<string, unknown> } = {},
): { detail: ValidationDetail[] } {
  return { detail: [{ type, loc: ["body", ...loc], msg, ...extra }] };
}

/** FastAPI's answer to a body that is not JSON (`loc` ends at the character it failed at). */
export function jsonInvalid(error: string, position = 0): { detail: ValidationDetail[] } {
  return { detail: [{ type: "json_invalid", loc: ["body", position], msg: "JSON decode error", input: {}, ctx: { error } }] };
}

/** Rounds of coercion before the remaining issues are reported (each round fixes every coercible field it sees). */
const COERCION_ROUNDS = 4;

/** Parses `input` as pydantic's lax mode would: coercible strings become numbers/booleans; refusals in pydantic's words. */
export function parseLikePydantic<S extends z.ZodType>(schema: S, input: unknown): PydanticParse<z.infer<S>> {
  let value = input;
  for (let round = 0; ; round++) {
    const parsed = schema.safeParse(value, { reportInput: true });
    if (parsed.success) return { ok: true, data: parsed.data };
    const fixes = round < COERCION_ROUNDS ? coercions(schema, parsed.error.issues) : [];
    if (fixes.length === 0) return { ok: false, detail: parsed.error.issues.flatMap((issue) => describe(schema, value, issue)) };
    value = structuredClone(value);
    for (const fix of fixes) setAt(value, fix.path, fix.value);
  }
}

// ---- lax coercion (pydantic's string → int / float / bool rules) ------------------------------

const INT_TEXT = /^[+-]?\d+(_\d+)*(\.0*)?$/;
const FLOAT_TEXT = /^[+-]?(\d+(_\d+)*)?(\.\d*)?([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(["1", "true", "t", "yes", "y", "on"]);
const FALSE_WORDS = new Set(["0", "false", "f", "no", "n", "off"]);

function laxInt(text: string): number | undefined {
  const t = text.trim();
  return INT_TEXT.test(t) ? Number(t.replace(/_/g, "")) : undefined;
}

function laxFloat(text: string): number | undefined {
  const t = text.trim().replace(/_/g, "");
  if (t === "" || t === "." || !FLOAT_TEXT.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

function laxBool(value: unknown): boolean | undefined {
  if (value === 0 || value === 1) return value === 1;
  if (typeof value !== "string") return undefined;
  const t = value.trim().toLowerCase();
  return TRUE_WORDS.has(t) ? true : FALSE_WORDS.has(t) ? false : undefined;
}

function coercions(schema: z.ZodType, issues: z.core.$ZodIssue[]): { path: PropertyKey[]; value: unknown }[] {
  const out: { path: PropertyKey[]; value: unknown }[] = [];
  for (const issue of issues) {
    if (issue.code !== "invalid_type" || !("input" in issue)) continue;
    const leaf = schemaAt(schema, issue.path);
    const input = issue.input;
    let value: unknown;
    if (issue.expected === "number" && leaf && kindOf(leaf) === "number") {
      if (typeof input === "string") value = isInt(leaf) ? laxInt(input) : laxFloat(input);
      else if (typeof input === "boolean") value = input ? 1 : 0;
    } else if (issue.expected === "boolean") {
      value = laxBool(input);
    }
    if (value !== undefined) out.push({ path: issue.path, value });
  }
  return out;
}

function setAt(root: unknown, path: PropertyKey[], value: unknown): void {
  let node = root as Record<PropertyKey, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<PropertyKey, unknown>;
  node[path.at(-1)!] = value;
}

// ---- walking the schema to the field an issue is about -----------------------------------------

type Def = { type: string; [key: string]: unknown };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"]);

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let hops = 0; hops < 32; hops++) {
    const def = defOf(s);
    if (WRAPPERS.has(def.type)) s = def.innerType as z.ZodType;
    else if (def.type === "pipe") s = def.in as z.ZodType;
    else if (def.type === "lazy") s = (def.getter as () => z.ZodType)();
    else return s;
  }
  return s;
}

/** The schema of the field at `path`, or undefined where the walk cannot tell (unions, unknown keys). */
function schemaAt(schema: z.ZodType, path: PropertyKey[]): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (const key of path) {
    if (!s) return undefined;
    const def = defOf(unwrap(s));
    if (def.type === "object") s = (def.shape as Record<string, z.ZodType>)[String(key)] ?? (def.catchall as z.ZodType | undefined);
    else if (def.type === "record") s = def.valueType as z.ZodType;
    else if (def.type === "array") s = def.element as z.ZodType;
    else if (def.type === "union") s = (def.options as z.ZodType[]).map((o) => schemaAt(o, [key])).find(Boolean);
    else return undefined;
  }
  return s;
}

function kindOf(schema: z.ZodType): string {
  return defOf(unwrap(schema)).type;
}

function isInt(schema: z.ZodType): boolean {
  const checks = (defOf(unwrap(schema)).checks ?? []) as { _zod: { def: { check: string; format?: string } } }[];
  return checks.some((c) => c._zod.def.check === "number_format" && (c._zod.def.format ?? "").includes("int"));
}

function titleOf(schema: z.ZodType | undefined): string | undefined {
  // `.meta()` registers a wrapped schema's title on the wrapper: look at every layer.
  for (let s = schema, hops = 0; s && hops < 32; hops++) {
    const title = z.globalRegistry.get(s)?.title;
    if (title) return title;
    const def = defOf(s);
    s = WRAPPERS.has(def.type) ? (def.innerType as z.ZodType) : undefined;
  }
  return undefined;
}

// ---- one zod issue in pydantic's words ---------------------------------------------------------

const loc = (path: PropertyKey[]): (string | number)[] => ["body", ...path.map((p) => (typeof p === "symbol" ? String(p) : p))];

/** Whether the key an issue is about is absent from the input (pydantic's `missing`), and the object it is absent from. */
function absence(input: unknown, path: PropertyKey[]): { missing: boolean; parent: unknown } {
  if (path.length === 0) return { missing: input === undefined, parent: input };
  let node = input;
  for (const key of path.slice(0, -1)) {
    if (node === null || typeof node !== "object") return { missing: false, parent: undefined };
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  const last = path.at(-1)!;
  const missing = node !== null && typeof node === "object" && !Object.prototype.hasOwnProperty.call(node, last);
  return { missing, parent: node };
}

function quoted(values: readonly unknown[]): string {
  const words = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describe(schema: z.ZodType, input: unknown, issue: z.core.$ZodIssue): ValidationDetail[] {
  const at = loc(issue.path);
  const given = "input" in issue ? { input: issue.input } : {};
  switch (issue.code) {
    case "invalid_type": {
      const { missing, parent } = absence(input, issue.path);
      if (missing) return [{ type: "missing", loc: at, msg: "Field required", input: parent ?? null }];
      const leaf = schemaAt(schema, issue.path);
      const value = issue.input;
      if (issue.expected === "int")
        return [{ type: "int_from_float", loc: at, msg: "Input should be a valid integer, got a number with a fractional part", ...given }];
      if (issue.expected === "number") {
        if (leaf && isInt(leaf)) {
          return typeof value === "string"
            ? [{ type: "int_parsing", loc: at, msg: "Input should be a valid integer, unable to parse string as an integer", ...given }]
            : [{ type: "int_type", loc: at, msg: "Input should be a valid integer", ...given }];
        }
        return typeof value === "string"
          ? [{ type: "float_parsing", loc: at, msg: "Input should be a valid number, unable to parse string as a number", ...given }]
          : [{ type: "float_type", loc: at, msg: "Input should be a valid number", ...given }];
      }
      if (issue.expected === "string") return [{ type: "string_type", loc: at, msg: "Input should be a valid string", ...given }];
      if (issue.expected === "boolean") {
        return typeof value === "string" || typeof value === "number"
          ? [{ type: "bool_parsing", loc: at, msg: "Input should be a valid boolean, unable to interpret input", ...given }]
          : [{ type: "bool_type", loc: at, msg: "Input should be a valid boolean", ...given }];
      }
      if (issue.expected === "array") return [{ type: "list_type", loc: at, msg: "Input should be a valid list", ...given }];
      if (issue.expected === "object" || issue.expected === "record") {
        const title = issue.expected === "object" ? titleOf(leaf) : undefined;
        return title
          ? [{ type: "model_type", loc: at, msg: `Input should be a valid dictionary or instance of ${title}`, ...given, ctx: { class_name: title } }]
          : [{ type: "dict_type", loc: at, msg: "Input should be a valid dictionary", ...given }];
      }
      return [{ type: `${issue.expected}_type`, loc: at, msg: issue.message, ...given }];
    }
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string")
        return [{ type: "string_too_short", loc: at, msg: `String should have at least ${plural(min, "character")}`, ...given, ctx: { min_length: min } }];
      if (issue.origin === "array" || issue.origin === "set") {
        const actual = Array.isArray(issue.input) ? issue.input.length : 0;
        return [
          {
            type: "too_short",
            loc: at,
            msg: `List should have at least ${plural(min, "item")} after validation, not ${actual}`,
            ...given,
            ctx: { field_type: "List", min_length: min, actual_length: actual },
          },
        ];
      }
      return issue.inclusive
        ? [{ type: "greater_than_equal", loc: at, msg: `Input should be greater than or equal to ${min}`, ...given, ctx: { ge: min } }]
        : [{ type: "greater_than", loc: at, msg: `Input should be greater than ${min}`, ...given, ctx: { gt: min } }];
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string")
        return [{ type: "string_too_long", loc: at, msg: `String should have at most ${plural(max, "character")}`, ...given, ctx: { max_length: max } }];
      if (issue.origin === "array" || issue.origin === "set") {
        const actual = Array.isArray(issue.input) ? issue.input.length : 0;
        return [
          {
            type: "too_long",
            loc: at,
            msg: `List should have at most ${plural(max, "item")} after validation, not ${actual}`,
            ...given,
            ctx: { field_type: "List", max_length: max, actual_length: actual },
          },
        ];
      }
      return issue.inclusive
        ? [{ type: "less_than_equal", loc: at, msg: `Input should be less than or equal to ${max}`, ...given, ctx: { le: max } }]
        : [{ type: "less_than", loc: at, msg: `Input should be less than ${max}`, ...given, ctx: { lt: max } }];
    }
    case "invalid_value": {
      const expected = quoted(issue.values);
      return [{ type: "literal_error", loc: at, msg: `Input should be ${expected}`, ...given, ctx: { expected } }];
    }
    case "invalid_format": {
      if (issue.format === "url") return [{ type: "url_parsing", loc: at, msg: "Input should be a valid URL", ...given }];
      const raw = "pattern" in issue && issue.pattern ? String(issue.pattern) : issue.format;
      const pattern = raw.startsWith("/") && raw.lastIndexOf("/") > 0 ? raw.slice(1, raw.lastIndexOf("/")) : raw;
      return [{ type: "string_pattern_mismatch", loc: at, msg: `String should match pattern '${pattern}'`, ...given, ctx: { pattern } }];
    }
    case "unrecognized_keys":
      return issue.keys.map((key) => {
        const parent = absence(input, [...issue.path, key]).parent as Record<string, unknown> | undefined;
        return { type: "extra_forbidden", loc: [...at, key], msg: "Extra inputs are not permitted", input: parent?.[key] };
      });
    case "invalid_union": {
      // A union field that is absent is pydantic's plain `missing`, not a failure of each member.
      const { missing, parent } = absence(input, issue.path);
      if (missing) return [{ type: "missing", loc: at, msg: "Field required", input: parent ?? null }];
      return [{ type: "value_error", loc: at, msg: `Value error, ${issue.message}`, ...given, ctx: { error: issue.message } }];
    }
    case "custom":
      return [{ type: "value_error", loc: at, msg: `Value error, ${issue.message}`, ...given, ctx: { error: issue.message } }];
    default:
      return [{ type: "value_error", loc: at, msg: `Value error, ${issue.message}`, ...given, ctx: { error: issue.message } }];
  }
}
