"""File checkpoints (issue 28) on a generated 10,000-file project.

- the first snapshot (an empty store and index) against ``git add -A`` + ``write-tree`` into a
  fresh repository of the same files (the target: no slower);
- an incremental snapshot with 3 files changed (the target: median under 150 ms);
- restoring 3 files (plan + write; the target: under 200 ms);
- the store's bytes: after the first snapshot, and added per incremental snapshot (3 files of
  about 1 KB changed: the rest is shared with every other snapshot).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from agent_tui.agent.checkpoints import CheckpointStore  # noqa: E402

FILES = 10_000
RUNS = 15


def make_project(top: Path, files: int = FILES, seed: int = 28) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for i in range(files):
        folder = top / f"pkg{i % 50:02d}" / f"mod{(i // 50) % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file{i:05d}.py"
        path.write_text(
            f"# file {i}\n" + "".join(f"x_{j} = {rng.random()!r}\n" for j in range(rng.randint(5, 60)))
        )
        paths.append(path)
    (top / ".gitignore").write_text("*.pyc\nbuild/\n")
    return paths


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _git_add_all(project: Path, repo: Path) -> float:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_DIR": str(repo / ".git"),
        "GIT_WORK_TREE": str(project),
    }
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env={**env, "GIT_DIR": str(repo / ".git")})
    started = time.perf_counter()
    subprocess.run(["git", "add", "-A"], check=True, cwd=project, env=env)
    subprocess.run(["git", "write-tree"], check=True, cwd=project, env=env, capture_output=True)
    return time.perf_counter() - started


def run() -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory(prefix="checkpoint-bench-") as tmp:
        top = Path(tmp)
        project = top / "project"
        project.mkdir()
        paths = make_project(project)
        firsts, gits = [], []
        for n in range(3):
            store = CheckpointStore(top / f"store{n}")
            started = time.perf_counter()
            first = store.snapshot(project)
            firsts.append(time.perf_counter() - started)
            gits.append(_git_add_all(project, top / f"repo{n}"))
        first_bytes = _folder_bytes(store.git_dir / "objects")
        rng = random.Random(1)
        incremental, per_snapshot = [], []
        previous = first
        for run in range(RUNS):
            for path in rng.sample(paths, 3):
                path.write_text(path.read_text() + f"y = {run}\n")
            before = _folder_bytes(store.git_dir / "objects")
            started = time.perf_counter()
            snap = store.snapshot(project)
            incremental.append(time.perf_counter() - started)
            per_snapshot.append(_folder_bytes(store.git_dir / "objects") - before)
            assert store.changes(previous.tree, snap.tree).count == 3
            previous = snap
        restores = []
        base = previous
        for run in range(RUNS):
            changed = rng.sample(paths, 3)
            for path in changed:
                path.write_text(f"overwritten {run}\n")
            started = time.perf_counter()
            now = store.snapshot(project)
            plan = store.plan(now.tree, base.tree)
            refused = store.apply(project, plan)
            restores.append(time.perf_counter() - started)
            assert not refused and len(plan) == 3
        for n in range(3):
            shutil.rmtree(top / f"repo{n}", ignore_errors=True)

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"

    inc = statistics.median(incremental) * 1000
    res = statistics.median(restores) * 1000
    first_ok = statistics.median(firsts) <= statistics.median(gits) * 1.1
    return [
        (f"first snapshot, {FILES:,} files", ms(firsts)),
        ("  git add -A + write-tree, fresh repository", ms(gits) + ("  ok" if first_ok else "  SLOWER")),
        (
            "incremental snapshot, 3 files changed (target < 150 ms)",
            ms(incremental) + ("  ok" if inc < 150 else "  MISSED"),
        ),
        (
            "restore 3 files: snapshot + plan + write (target < 200 ms)",
            ms(restores) + ("  ok" if res < 200 else "  MISSED"),
        ),
        ("store after the first snapshot", f"{first_bytes:,} bytes"),
        (
            "store growth per incremental snapshot (3 files)",
            f"{statistics.median(per_snapshot):,.0f} bytes median",
        ),
    ]


if __name__ == "__main__":
    for label, figure in run():
        print(f"{label:<62} {figure}")
