"""Runs the client's unittest suite and writes a JSON summary (for test/trainer-clients.test.ts,
which asserts on parsed counts, not on the text output).

    python3 clients/python/tests/run_suite.py [--start DIR] [--report FILE]
"""

import argparse
import json
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--start", type=Path, default=HERE, help="folder of test_*.py files (default: the client's tests)")
    parser.add_argument("--report", help="write {tests_run, failures, errors, skipped, skip_reasons, failed} here")
    args = parser.parse_args()
    start = args.start.resolve()
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(start))
    suite = unittest.defaultTestLoader.discover(str(start), top_level_dir=str(start))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stderr).run(suite)
    summary = {
        "tests_run": result.testsRun,
        "failures": len(result.failures),
        "errors": len(result.errors),
        "skipped": len(result.skipped),
        "skip_reasons": sorted({reason for _, reason in result.skipped}),
        "failed": [test.id() for test, _ in result.failures + result.errors],
    }
    if args.report:
        Path(args.report).write_text(json.dumps(summary))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
