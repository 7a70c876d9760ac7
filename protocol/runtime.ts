// Why: a task's sandbox request travels in task files, Polar's TaskRequest and the coordinator's
// assignments; it keeps the field names of Polar's RuntimeSpec so Polar task files load as they are.
import { z } from "zod";

export const RUNTIME_BACKENDS = ["docker", "process"] as const;
export const RuntimeBackend = z.enum(RUNTIME_BACKENDS);
export type RuntimeBackend = z.infer<typeof RuntimeBackend>;

export const NETWORK_MODES = ["none", "host"] as const;

/** One step run when a sandbox is prepared for a task (Polar's prepare actions). */
export const PrepareAction = z.discriminatedUnion("type", [
  /** `content` (utf-8 text) or `content_base64`, or `source` (a host path) → `path` in the sandbox. */
  z.object({
    type: z.literal("upload_file"),
    path: z.string(),
    content: z.string().optional(),
    content_base64: z.string().optional(),
    source: z.string().optional(),
    mode: z.number().int().optional(),
  }),
  /** A host folder copied to `path` in the sandbox. */
  z.object({ type: z.literal("upload_dir"), source: z.string(), path: z.string() }),
  /** A shell command (string) or argv, retried up to `max_attempts` times. */
  z.object({
    type: z.literal("exec"),
    command: z.union([z.string(), z.array(z.string()).min(1)]),
    cwd: z.string().optional(),
    env: z.record(z.string(), z.string()).optional(),
    timeout_seconds: z.number().positive().optional(),
    max_attempts: z.number().int().min(1).max(10).default(1),
  }),
]);
export type PrepareAction = z.infer<typeof PrepareAction>;

export const RuntimeSpec = z.looseObject({
  backend: RuntimeBackend.optional(),
  image: z.string().default("polar-bookworm:dev"),
  workdir: z.string().default("/work"),
  env: z.record(z.string(), z.string()).default({}),
  network: z.enum(NETWORK_MODES).default("none"),
  cpus: z.number().positive().optional(),
  memory_mb: z.number().int().positive().optional(),
  pids_limit: z.number().int().positive().optional(),
  /** Capabilities to keep (all are dropped otherwise). */
  cap_add: z.array(z.string()).default([]),
  prepare: z.array(PrepareAction).default([]),
});
export type RuntimeSpec = z.infer<typeof RuntimeSpec>;
export type RuntimeSpecInput = z.input<typeof RuntimeSpec>;
