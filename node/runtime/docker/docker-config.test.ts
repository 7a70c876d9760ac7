// The container definition a spec becomes (no engine needed): the operator's pids limit caps a
// request's, and the disk limit is asked for only when the runtime knows the engine takes it.
import { expect, test } from "bun:test";
import { containerOptions } from "./docker-config.ts";
import { RuntimeSpec } from "../types.ts";

const plan = (spec: object, extra: object = {}) => ({
  sandboxId: "d-1",
  spec: RuntimeSpec.parse(spec),
  labels: { node_id: "n" },
  mounts: [],
  hostRunDir: "/tmp/run",
  hostGatewayDir: "/tmp/gateway",
  hostJobsDir: "/tmp/jobs",
  init: true,
  ...extra,
});

test("pids: the operator's limit unless the request asks for less", () => {
  const limits = { pids: 100, diskMb: 2048 };
  expect(containerOptions(plan({}, { limits })).HostConfig?.PidsLimit).toBe(100);
  expect(containerOptions(plan({ pids_limit: 100_000 }, { limits })).HostConfig?.PidsLimit).toBe(100);
  expect(containerOptions(plan({ pids_limit: 20 }, { limits })).HostConfig?.PidsLimit).toBe(20);
  expect(containerOptions(plan({})).HostConfig?.PidsLimit).toBe(512);
});

test("disk: --storage-opt size of disk_mb when asked for, nothing otherwise", () => {
  const limits = { pids: 100, diskMb: 2048 };
  expect(containerOptions(plan({}, { limits, diskLimit: true })).HostConfig?.StorageOpt).toEqual({ size: "2048M" });
  expect(containerOptions(plan({}, { limits, diskLimit: false })).HostConfig?.StorageOpt).toBeUndefined();
});
