"""pi 1.6 in ``bench/pi``, installed on first need: every test that has pi read a file calls
``pi_node()`` itself, so none depends on another test having installed pi first (pytest-randomly
orders them differently on every run)."""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PI_DIR = ROOT / "bench" / "pi"
PI_CORE = PI_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "core"


@functools.cache
def pi_node() -> str:
    """The ``node`` that runs pi's scripts, after ``npm ci`` in ``bench/pi`` if pi is missing (about
    200 MB, once). Fails the test, with what to install, when node or npm is not there."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "node is not installed: the pi compatibility tests run pi 1.6 itself "
            "(install Node.js >= 20 and npm, then rerun; bench/pi is set up by `npm ci`)",
            pytrace=False,
        )
    if not (PI_CORE / "session-manager.js").exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: it is needed once to install pi into bench/pi", pytrace=False)
        # Installing a tool, not testing agent-tui: npm gets the developer's own HOME back for its
        # registry settings and download cache (the tests' homes are empty and thrown away).
        installer = {**os.environ, "HOME": pwd.getpwuid(os.getuid()).pw_dir}
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            installer.pop(name, None)
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=PI_DIR,
            env=installer,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0 or not (PI_CORE / "session-manager.js").exists():
            pytest.fail(f"`npm ci` in {PI_DIR} failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return node
