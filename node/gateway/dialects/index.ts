// Why: the gateway mounts each dialect at its endpoint from this one table.
import { anthropicDialect } from "./anthropic/index.ts";
import { chatDialect } from "./chat/index.ts";
import type { Dialect } from "./dialect.ts";
import { responsesDialect } from "./responses/index.ts";

export const DIALECT_ENDPOINTS: ReadonlyArray<{ path: string; dialect: Dialect }> = [
  { path: "/v1/chat/completions", dialect: chatDialect },
  { path: "/v1/responses", dialect: responsesDialect },
  { path: "/v1/messages", dialect: anthropicDialect },
];

export { anthropicDialect, chatDialect, responsesDialect };
