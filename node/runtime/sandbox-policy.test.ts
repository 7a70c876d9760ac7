// What a request's runtime may ask for under an operator's policy: host paths only inside the
// roots after symlinks (never probed outside them), network host and cap_add only when granted.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { assertRuntimeAllowed, normalizeCapability, runtimeRequestRefusals, sandboxPolicy, TRUSTED_CALLER_POLICY } from "./sandbox-policy.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "polar-policy-")));
const root = join(base, "tasks");
const outside = join(base, "outside");
mkdirSync(join(root, "repo"), { recursive: true });
mkdirSync(outside);
writeFileSync(join(root, "repo", "a.py"), "inside");
writeFileSync(join(outside, "secret"), "host secret");
symlinkSync(outside, join(root, "to-outside"));
symlinkSync(join(root, "repo"), join(root, "to-repo"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const policy = sandboxPolicy({ hostPathRoots: [root] });
const upload = (source: string) => ({ prepare: [{ type: "upload_file", path: "x", source }] });

test("the default policy refuses network host and every capability; a trusted caller's allows both", () => {
  expect(runtimeRequestRefusals({ network: "host", cap_add: ["NET_ADMIN", "sys_admin"] }, policy)).toEqual([
    { loc: ["network"], msg: expect.stringContaining("sandbox.allow_host_network") },
    { loc: ["cap_add", 0], msg: expect.stringContaining("NET_ADMIN") },
    { loc: ["cap_add", 1], msg: expect.stringContaining("sys_admin") },
  ]);
  expect(runtimeRequestRefusals({ network: "none", cap_add: [] }, policy)).toEqual([]);
  expect(runtimeRequestRefusals({ network: "host", cap_add: ["SYS_ADMIN"], prepare: [{ source: "/etc/shadow" }] }, TRUSTED_CALLER_POLICY)).toEqual([]);
  expect(runtimeRequestRefusals(null, policy)).toEqual([]);
});

test("granted network host and capabilities pass, in any spelling; others still do not", () => {
  const open = sandboxPolicy({ hostPathRoots: [], allowHostNetwork: true, allowCapAdd: ["net_bind_service"] });
  expect(runtimeRequestRefusals({ network: "host", cap_add: ["NET_BIND_SERVICE", "CAP_NET_BIND_SERVICE", "net_bind_service"] }, open)).toEqual([]);
  expect(runtimeRequestRefusals({ cap_add: ["NET_BIND_SERVICE", "ALL"] }, open).map((r) => r.loc)).toEqual([["cap_add", 1]]);
  expect(runtimeRequestRefusals({ cap_add: ["SYS_ADMIN"] }, sandboxPolicy({ hostPathRoots: [], allowCapAdd: ["ALL"] }))).toEqual([]);
  expect(normalizeCapability(" cap_chown ")).toBe("CAP_CHOWN");
});

test("host paths: inside the roots pass (an in-root symlink too); /proc, outside folders, relative paths and symlinks out are refused", () => {
  expect(runtimeRequestRefusals(upload(join(root, "repo", "a.py")), policy)).toEqual([]);
  expect(runtimeRequestRefusals({ prepare: [{ type: "upload_dir", source: join(root, "to-repo"), path: "r" }] }, policy)).toEqual([]);
  const refused = (source: string) => runtimeRequestRefusals(upload(source), policy);
  expect(refused("/proc/self/environ")).toEqual([{ loc: ["prepare", 0, "source"], msg: expect.stringContaining("outside the folders") }]);
  expect(refused(outside)[0]!.msg).toContain("outside the folders");
  expect(refused(join(root, "..", "outside", "secret"))[0]!.msg).toContain("outside the folders");
  expect(refused(join(root, "to-outside", "secret"))[0]!.msg).toContain("through a symlink");
  expect(refused("repo/a.py")[0]!.msg).toContain("must be absolute");
  expect(refused(join(root, "missing.txt"))[0]!.msg).toBe("host path does not exist");
});

test("a path outside every root is refused without being looked at: a missing and an existing one read the same", () => {
  expect(runtimeRequestRefusals(upload(join(outside, "secret")), policy)).toEqual(runtimeRequestRefusals(upload(join(outside, "no-such-file")), policy));
});

test("eval_prepare steps (a task row's, or extra keys of a request's runtime) are checked like prepare", () => {
  const runtime = {
    prepare: [],
    eval_prepare: [
      { type: "exec", command: "true" },
      { type: "upload_dir", source: "/root", path: "r" },
    ],
  };
  expect(runtimeRequestRefusals(runtime, policy).map((r) => r.loc)).toEqual([["eval_prepare", 1, "source"]]);
});

test("assertRuntimeAllowed throws forbidden naming every refused field", () => {
  const err = (() => {
    try {
      assertRuntimeAllowed({ network: "host", ...upload("/etc/passwd") }, policy);
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(PolarError);
  expect((err as PolarError).code).toBe("forbidden");
  expect((err as PolarError).message).toContain("runtime.network");
  expect((err as PolarError).message).toContain("runtime.prepare.0.source");
});

test("a configured root that does not exist stops the node, naming it", () => {
  expect(() => sandboxPolicy({ hostPathRoots: [root, join(base, "nope")] })).toThrow(/sandbox\.host_path_roots\[1\]/);
  expect(sandboxPolicy({ hostPathRoots: [join(root, "to-repo")] }).hostPathRoots).toEqual([join(root, "repo")]);
});
