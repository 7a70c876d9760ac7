// Why: one import point for wire schemas shared by node, coordinator and clients.
export * from "./chat.ts";
export * from "./calls.ts";
export * from "./errors.ts";
export * from "./admin.ts";
export * from "./sessions.ts";
export * from "./trace.ts";
export * from "./runtime.ts";
export * from "./rollout.ts";
export * from "./task.ts";
export * from "./evaluation.ts";
export * from "./generate.ts";
export * from "./harness-names.ts";
export * from "./node-link.ts";
export * from "./trainer-stream.ts";
export * from "./gym.ts";
