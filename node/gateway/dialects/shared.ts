// Why: the three dialects join text parts, decide which text a client is shown, stamp `created`
// times and read their render hints the same way; one copy here keeps them from drifting apart
// (a prompt must render the same whichever dialect carried it).
import type { z } from "zod";
import type { PivotRequest, PivotResponse } from "../pivot.ts";

/**
 * Text parts of one message are joined with a newline, as vLLM joins the text parts of an OpenAI
 * multi-part message, so a prompt renders the same whichever dialect carried it.
 */
export const TEXT_PART_SEPARATOR = "\n";

/** The text of the parts `isText` keeps (a kept part without text counts as ""), joined. */
export function joinTextParts<Part extends { type: string; text?: string }>(parts: readonly Part[], isText: (part: Part) => boolean): string {
  return parts
    .filter(isText)
    .map((part) => part.text ?? "")
    .join(TEXT_PART_SEPARATOR);
}

/**
 * The text a client is shown. In a tool-calling turn, whitespace-only text (Qwen3 writes "\n\n"
 * after `</think>`, and vLLM keeps it) is no text at all: OpenAI sends null there, and a client
 * echoing "" instead of "\n\n" makes the chat template re-render exactly the sampled tokens.
 */
export function shownContent(response: PivotResponse): string {
  return response.tool_calls.length > 0 && response.content.trim() === "" ? "" : response.content;
}

/** Seconds since the epoch, as OpenAI's `created` / `created_at` fields carry them. */
export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * The dialect's render hints from the request. Hints that do not parse fall back to the schema's
 * defaults, so `schema` must give every field a default.
 */
export function renderHintsOf<Schema extends z.ZodType>(schema: Schema, request: PivotRequest): z.output<Schema> {
  const parsed = schema.safeParse(request.render_hints ?? {});
  return parsed.success ? parsed.data : schema.parse({});
}
