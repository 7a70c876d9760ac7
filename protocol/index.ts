// Why: one import point for wire schemas shared by node, coordinator and clients.
export * from "./chat.ts";
export * from "./calls.ts";
export * from "./errors.ts";
export * from "./admin.ts";
export * from "./sessions.ts";
export * from "./trace.ts";
export * from "./runtime.ts";
export * from "./rollout.ts";
