// Why: drizzle-kit reads this to generate the node store's committed SQL migrations.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./node/store/schema.ts",
  out: "./migrations/node",
});
