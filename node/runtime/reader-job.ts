// Why: both runtimes run commands through *readers* — a shell started ahead of time that reads a
// job id from its stdin and sources the job script the host wrote into the run folder — so that
// a command costs a write and a fork instead of a runc exec or a new bwrap. This is the one place
// that writes that shell and the common part of job scripts (cwd, exported env with checked
// names, the quoted argv), so both quote and validate alike.
import { PolarError } from "../../protocol/errors.ts";
import { SANDBOX_RUN_DIR, type ExecRequest } from "./types.ts";

/** Where job scripts live inside the run folder: a host folder only the node writes, bound read-only there. */
export const EXEC_STATE_DIR = ".exec";
export const JOBS_IN_SANDBOX = `${SANDBOX_RUN_DIR}/${EXEC_STATE_DIR}`;
/** The reader shell's script: one job id from stdin, then that job; the rest of stdin is the job's. */
export const READER_SCRIPT = `IFS= read -r id || exit 0; . "${JOBS_IN_SANDBOX}/$id.sh"`;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The argv a request runs (a shell string through `/bin/sh -c`); empty is a bad_request. */
export function commandArgv(command: ExecRequest["command"]): string[] {
  const argv = typeof command === "string" ? ["/bin/sh", "-c", command] : command;
  if (argv.length === 0) throw new PolarError("bad_request", "empty command");
  return argv;
}

export interface JobParts {
  /** `cd` to the request's cwd (the runtime decides what a failed cd does). */
  cd: string;
  /** One `export NAME='value'` per request env variable. */
  exports: string[];
  /** The quoted argv. */
  command: string;
}

/** The lines every job script has; throws bad_request for an empty command or a bad env name. */
export function jobParts(request: ExecRequest, defaultCwd: string): JobParts {
  const argv = commandArgv(request.command);
  const exports = Object.entries(request.env ?? {}).map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new PolarError("bad_request", `invalid environment variable name ${JSON.stringify(name)}`);
    return `export ${name}=${quote(value)}`;
  });
  return { cd: `cd ${quote(request.cwd ?? defaultCwd)}`, exports, command: argv.map(quote).join(" ") };
}
