# The package installs with pip from its folder (a copy, so no build files land in the tree) and
# imports from the installed location with only the standard library and websockets.
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


@unittest.skipUnless(importlib.util.find_spec("pip") and importlib.util.find_spec("setuptools"), "needs pip and setuptools for this Python")
class PackagingTest(unittest.TestCase):
    def test_pip_installs_the_folder(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "src"
            shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
            target = Path(tmp) / "site"
            # --no-build-isolation: use this Python's setuptools (no package index is needed).
            install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--target", str(target), str(source)], capture_output=True, text=True)
            self.assertEqual(install.returncode, 0, install.stderr)
            probe = subprocess.run(
                [sys.executable, "-c", "import polar_client, polar_client.adapters, sys; print(polar_client.__file__); print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy', 'trl', 'verl')))"],
                capture_output=True, text=True, cwd=tmp, env={"PYTHONPATH": str(target)},
            )
            self.assertEqual(probe.returncode, 0, probe.stderr)
            location, frameworks = probe.stdout.splitlines()
            self.assertTrue(location.startswith(str(target)))
            self.assertEqual(frameworks, "[]")


if __name__ == "__main__":
    unittest.main()
