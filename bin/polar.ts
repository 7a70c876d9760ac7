#!/usr/bin/env bun
// Why: the single `polar` entry point; it only dispatches to subcommands, each of which owns
// its flags and help.
import { z } from "zod";
import { reexecWithAllocatorOptions } from "../lib/allocator-options.ts";
import { paceFullCollections } from "../lib/gc-pacing.ts";
import { UsageError } from "../lib/cli-args.ts";
import { TaskFileError } from "../lib/task-file.ts";
import { PolarError } from "../protocol/errors.ts";

const COMMANDS: Record<string, { summary: string; run: (argv: string[]) => Promise<void> }> = {
  demo: {
    summary:
      "run the embedded demo: a node, the mock engine and the mini agent on bundled tasks (--cluster: coordinator + 2 nodes + a trainer, with the dashboard)",
    run: async (a) => (await import("../node/demo/cli.ts")).runDemoCli(a),
  },
  gateway: { summary: "run the LLM gateway", run: async (a) => (await import("../node/gateway/cli.ts")).runGatewayCli(a) },
  tasks: {
    summary: "task files: validate (gold patch → reward 1, unmodified repository → reward 0), import exercism",
    run: async (a) => (await import("../node/eval/cli.ts")).runTasksCli(a),
  },
  generate: {
    summary: "offline trajectories / SFT data: rollouts against an endpoint or the mock engine, accepted ones as chat + token rows (resumable)",
    run: async (a) => (await import("../node/generate/cli.ts")).runGenerateCli(a),
  },
  node: {
    summary: "run the node agent: gateway, sandbox pool, rollout pipeline and Polar's rollout API",
    run: async (a) => (await import("../node/node-cli.ts")).runNodeCli(a),
  },
  gym: {
    summary: "run a NeMo Gym agent server (POST /run, /aggregate_metrics) in front of a node: each row is one rollout",
    run: async (a) => (await import("../node/gym/cli.ts")).runGymCli(a),
  },
  coordinator: {
    summary: "run the coordinator: queue, load balancing across nodes, trainer streams, admin API",
    run: async (a) => (await import("../coordinator/cli.ts")).runCoordinatorCli(a),
  },
  "mock-engine": { summary: "run the vLLM/SGLang-compatible mock engine", run: async (a) => (await import("../node/mock-engine/cli.ts")).runMockEngineCli(a) },
};

function usage(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(14)} ${c.summary}`);
  return `usage: polar <command> [flags]\n\nCommands:\n${rows.join("\n")}\n\nRun 'polar <command> --help' for a command's flags.`;
}

/**
 * Commands that carry the gateway: they run with the allocator kept from returning pages
 * (lib/allocator-options.ts) and full collections paced to bound what that keeps (lib/gc-pacing.ts).
 */
const GATEWAY_COMMANDS = new Set(["gateway", "node", "gym"]);

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name && GATEWAY_COMMANDS.has(name)) {
    reexecWithAllocatorOptions();
    paceFullCollections();
  }
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}"\n\n${usage()}`);
  await command.run(rest);
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || err instanceof PolarError || err instanceof TaskFileError) {
    console.error(err.message);
    process.exit(2);
  }
  // Config and option schemas reject bad flag values (a short admin token, a malformed URL).
  if (err instanceof z.ZodError) {
    console.error(`invalid settings:\n${z.prettifyError(err)}`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
