// Why: drizzle-kit reads this to generate the coordinator store's committed SQL migrations.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./coordinator/store/schema.ts",
  out: "./migrations/coordinator",
});
