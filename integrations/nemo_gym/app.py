"""Polar as a NeMo Gym agent server.

Gym starts every agent server as ``python <entrypoint>`` in the server's folder, with its global
config (YAML) in NEMO_GYM_CONFIG_DICT and the name of this server's block in NEMO_GYM_CONFIG_PATH.
This entry point checks both and replaces itself with ``polar gym --gym-env``, which reads the
block (host, port, harness, ``node:`` settings) and the policy endpoint (``policy_base_url`` /
``policy_model_name``, or the block's ``model_server``), then serves ``/run`` and
``/aggregate_metrics`` on that host and port.

Standard library only: Gym builds a venv for this folder, but nothing here needs it.

Where polar is found, in order: POLAR_BIN (a command line, e.g. ``bun /opt/polar/bin/polar.ts``),
``polar`` on PATH, then ``bun`` with the ``bin/polar.ts`` of the Polar checkout this file lives in
(also through a symlink from Gym's ``responses_api_agents/``).
"""

import os
import shlex
import shutil
import sys

CONFIG_VARIABLES = ("NEMO_GYM_CONFIG_DICT", "NEMO_GYM_CONFIG_PATH")


def polar_command():
    explicit = os.environ.get("POLAR_BIN")
    if explicit:
        return shlex.split(explicit)
    installed = shutil.which("polar")
    if installed:
        return [installed]
    checkout_entry = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "bin", "polar.ts")
    bun = shutil.which("bun") or next(
        (p for p in (os.path.expanduser("~/.bun/bin/bun"),) if os.access(p, os.X_OK)), None
    )
    if bun and os.path.isfile(checkout_entry):
        return [bun, os.path.normpath(checkout_entry)]
    sys.exit(
        "polar app.py: cannot find polar. Set POLAR_BIN (e.g. 'bun /path/to/polar/bin/polar.ts'), "
        "put `polar` on PATH, or keep this file inside Polar's integrations/nemo_gym."
    )


def main():
    missing = [name for name in CONFIG_VARIABLES if not os.environ.get(name)]
    if missing:
        sys.exit(
            "polar app.py: %s not set. Gym sets them when it starts this server (`gym env run`); "
            "to run Polar's Gym agent by hand use `polar gym --config <file>`." % " and ".join(missing)
        )
    command = polar_command() + ["gym", "--gym-env"] + sys.argv[1:]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
