"""``make run`` says where the agent works and how to point it elsewhere (issue 26: it started in
the checkout, so the agent's tools worked on agent-tui's own source, and said nothing)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # make, and agent-tui as a process

ROOT = Path(__file__).resolve().parents[2]


def make_run(*variables: str) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make, "make is needed (the README's two commands)"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(
        [make, "-s", "--no-print-directory", "run", "ARGS=--version", *variables],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_make_run_names_the_folder_and_dir_moves_it(tmp_path: Path) -> None:
    here = make_run()
    assert here.returncode == 0, here.stderr
    first, *rest = here.stdout.splitlines()
    assert first.startswith(f"agent-tui works in {ROOT}; elsewhere: make run DIR="), first
    assert rest[-1].startswith("agent-tui "), here.stdout  # --version ran, in the checkout
    project = tmp_path / "your-project"
    project.mkdir()
    there = make_run(f"DIR={project}")
    assert there.returncode == 0, there.stderr
    assert there.stdout.splitlines()[0].startswith(f"agent-tui works in {project};"), there.stdout
