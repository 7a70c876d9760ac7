// Escape attempts from inside a rollout's sandbox on a running node (real bwrap, the command
// harness as the agent, the node's default policy and limits): one script tries each way out —
// the node's environment, database and ports, the engine, the host's /root, /tmp, devices and
// processes, another rollout's files, the gateway's admin and session APIs and another session
// through the rollout's socket, privileges, mounts, cgroups and rlimits, and a process left
// behind — and reports what it reached. Every attempt must hold; the count is in docs/security.md.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EvaluationDetail } from "../protocol/evaluation.ts";
import { findBwrap } from "../node/runtime/process/bwrap.ts";
import { defaultProcessRoot } from "../node/runtime/process/process.ts";
import { pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";
import { rolloutFetch } from "./helpers/rollout-fetch.ts";

const BWRAP = findBwrap();
const REQUIRE = process.env.POLAR_REQUIRE_BWRAP === "1";
const T = 240_000;
const ENV_MARKER = `polar-env-marker-${randomBytes(8).toString("hex")}`;
const OTHER_MARKER = `polar-other-rollout-${randomBytes(8).toString("hex")}`;
const LEFTOVER_SLEEP = `4271.${1000 + Math.floor(Math.random() * 8999)}`;
process.env.POLAR_ESCAPE_ENV_MARKER = ENV_MARKER;

/** The attacker: each attempt prints `name held|ESCAPED detail` to /tmp/escapes (read back by the evaluator). */
function attackScript(c: { nodePid: number; nodePort: number; enginePort: number; nodeDir: string; hostRoot: string[] }): string {
  return `
import os, socket, json, resource, subprocess, urllib.request, urllib.error
C = ${JSON.stringify({ ...c, envMarker: ENV_MARKER, otherMarker: OTHER_MARKER, leftover: LEFTOVER_SLEEP })}
out = []
def attempt(name, held, detail=""):
    out.append(f"{name} {'held' if held else 'ESCAPED'} {detail}".strip())
def fails(fn):
    try:
        fn()
        return False
    except Exception:
        return True
def refused(port):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", port))
        return False
    except OSError:
        return True
    finally:
        s.close()
def http(path, token=None, body=None):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    root = base[: base.index("/v1")] if "/v1" in base else base
    req = urllib.request.Request(root + path, data=body, headers={"content-type": "application/json", **({"authorization": "Bearer " + token} if token else {})})
    try:
        return urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code
def read(path):
    with open(path, "rb") as f:
        return f.read()

attempt("node_environment_in_env", C["envMarker"] not in json.dumps(dict(os.environ)) and "POLAR_ADMIN_TOKEN" not in os.environ)
attempt("node_environment_via_proc_1", C["envMarker"].encode() not in read("/proc/1/environ"))
attempt("node_process_visible", not os.path.exists(f"/proc/{C['nodePid']}/environ") or C["envMarker"].encode() not in read(f"/proc/{C['nodePid']}/environ"))
attempt("signal_node_process", fails(lambda: os.kill(C["nodePid"], 0)))
pids = [p for p in os.listdir("/proc") if p.isdigit()]
attempt("host_processes_hidden", len(pids) < 40, f"{len(pids)} visible")
attempt("node_database", fails(lambda: read(os.path.join(C["nodeDir"], "node.db"))))
attempt("node_folder", not os.path.exists(C["nodeDir"]))
attempt("host_root_home", not (set(os.listdir("/root")) & set(C["hostRoot"])), ",".join(sorted(set(os.listdir("/root")) & set(C["hostRoot"]))))
attempt("host_tmp", not os.path.exists("/tmp/polar-docker") and not any(n.startswith("polar-node-e2e-") for n in os.listdir("/tmp")))
attempt("docker_socket", not os.path.exists("/tmp/polar-docker/docker.sock") and not os.path.exists("/var/run/docker.sock"))
attempt("etc_shadow", not os.path.exists("/etc/shadow"))
attempt("block_devices", not any(n.startswith(("vd", "sd", "nvme", "loop")) for n in os.listdir("/dev")))
attempt("node_port", refused(C["nodePort"]))
attempt("engine_port", refused(C["enginePort"]))
ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
attempt("network_interfaces", ifaces == ["lo"], ",".join(ifaces))
attempt("gateway_admin_api", http("/v1/admin/state") == 403)
attempt("gateway_session_api", http("/v1/sessions") == 403)
attempt("gateway_rollout_api", http("/rollout/status") == 403)
attempt("gateway_other_session", http("/v1/chat/completions", token="not-this-session", body=b'{"model":"m","messages":[]}') == 403)
def other_rollout_files():
    for top in ["/", "/work", "/tmp", "/root", "/polar"]:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in ("/proc", "/sys", "/dev", "/usr", "/polar/harnesses")]
            if C["otherMarker"] in filenames:
                return dirpath
    return None
found = other_rollout_files()
attempt("other_rollout_files", found is None, found or "")
def write_usr():
    with open("/usr/bin/polar-escape", "w") as f:
        f.write("x")
attempt("write_host_system", fails(write_usr))
attempt("write_sysrq", fails(lambda: open("/proc/sysrq-trigger", "w").write("h")))
attempt("write_host_sysctl", fails(lambda: open("/proc/sys/vm/drop_caches", "w").write("1")))
core_pattern = open("/proc/sys/kernel/core_pattern").read()
attempt("write_core_pattern", fails(lambda: open("/proc/sys/kernel/core_pattern", "w").write(core_pattern)))  # the same value: harmless if it were written
attempt("kernel_keys", fails(lambda: read("/proc/keys")) or read("/proc/keys") == b"")
try:
    open("/proc/sys/kernel/hostname", "w").write("polar-escaped")  # the sandbox's own UTS namespace: checked on the host
except OSError:
    pass
status = open("/proc/self/status").read()
cap_eff = int([l for l in status.splitlines() if l.startswith("CapEff:")][0].split()[1], 16)
attempt("capabilities", cap_eff == 0, hex(cap_eff))
attempt("no_new_privileges", "NoNewPrivs:\\t1" in status)
attempt("mount_tmpfs", subprocess.run(["mount", "-t", "tmpfs", "x", "/tmp"], capture_output=True).returncode != 0)
attempt("cgroup_filesystem", not os.path.exists("/sys/fs/cgroup"))
attempt("raise_process_limit", fails(lambda: resource.setrlimit(resource.RLIMIT_NPROC, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))))
attempt("grow_disk_limit", subprocess.run(["mount", "-o", "remount,size=8g", "/"], capture_output=True).returncode != 0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", C["leftover"]])
    os._exit(0)
os.wait()
open("/tmp/escapes", "w").write("\\n".join(out) + "\\n")
`;
}

const describeBwrap = BWRAP || REQUIRE ? describe : describe.skip;
if (!BWRAP && !REQUIRE) test.skip("sandbox escapes [SKIPPED: bwrap not installed — apt-get install bubblewrap]", () => {});

/** Host processes (not zombies) whose command line is `sleep <arg>`. */
function hostSleepers(arg: string): number {
  let n = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8") === `sleep\0${arg}\0` && stat[stat.lastIndexOf(")") + 2] !== "Z") n++;
    } catch {
      // gone
    }
  }
  return n;
}

describeBwrap("escapes from a rollout's sandbox", () => {
  let stack: NodeStack;
  beforeAll(async () => {
    stack = await startNodeStack({});
  }, T);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  test(
    "every attempt holds, and nothing the sandbox started outlives it",
    async () => {
      const hostname = readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
      const command = (id: string, script: string, evaluator: Record<string, unknown>) => ({
        task_id: id,
        instruction: "escape",
        agent: { harness: "command", settings: { argv: ["/bin/sh", "-c", script] } },
        runtime: { backend: "process" },
        evaluator,
        metadata: { agent_timeout: 120 },
      });
      // Another rollout on the same node, holding a marker file while the attacker looks for it.
      const otherId = `escape-other-${process.pid}`;
      expect((await submit(stack.node.url, command(otherId, `touch /work/${OTHER_MARKER} && sleep 60`, { strategy: "session_completed" }))).status).toBe(200);
      const nodeDir = join(defaultProcessRoot(), stack.node.config.node_id);
      const deadline = Date.now() + 60_000;
      const otherHasMarker = () => existsSync(nodeDir) && readdirSync(nodeDir).some((id) => existsSync(join(nodeDir, id, "fs", "work", OTHER_MARKER)));
      while (!otherHasMarker() && Date.now() < deadline) await Bun.sleep(100);
      expect(otherHasMarker()).toBe(true);

      const id = `escape-${process.pid}`;
      const script = attackScript({
        nodePid: process.pid,
        nodePort: Number(new URL(stack.node.url).port),
        enginePort: Number(new URL(stack.engine.url).port),
        nodeDir: stack.dir,
        hostRoot: readdirSync("/root"),
      });
      const evaluator = { strategy: "command", config: { sandbox: "agent", command: "cat /tmp/escapes", expected_output: "ESCAPED", match: "contains" } };
      expect((await submit(stack.node.url, command(id, `python3 -c '${script.replaceAll("'", `'"'"'`)}'`, evaluator))).status).toBe(200);
      const [r] = (await pollTask(stack.node.url, id)).results;
      expect(r!.status).toBe("COMPLETED");
      expect(r!.metadata.agent).toMatchObject({ exit_code: 0 });
      const lines = EvaluationDetail.parse(r!.metadata.evaluation).logs.command!.text.trim().split("\n");
      const attempts = lines.map((line) => {
        const [name, verdict, ...detail] = line.split(" ");
        return { name: name!, verdict: verdict!, detail: detail.join(" ") };
      });
      expect(attempts.filter((a) => a.verdict !== "held")).toEqual([]);
      expect(attempts.length).toBe(31);
      expect(r!.metadata.reward).toBe(0); // the evaluator looked for "ESCAPED" and found none
      // Checked on the host: the hostname the sandbox set stayed in its UTS namespace.
      expect(readFileSync("/proc/sys/kernel/hostname", "utf8").trim()).toBe(hostname);

      await rolloutFetch(`${stack.node.url}/rollout/task/${otherId}`, { method: "DELETE" });
      await pollTask(stack.node.url, otherId);
      // Checked on the host: the daemonized `sleep` the attacker left behind died with its sandbox.
      expect(hostSleepers(LEFTOVER_SLEEP)).toBe(0);
      console.log(`sandbox escapes: ${attempts.length + 2} attempts (${attempts.length} in the sandbox, 2 checked on the host), all held`);
      expect(((await (await fetch(`${stack.node.url}/health`)).json()) as { status: string }).status).toBe("ok");
    },
    T,
  );
});
