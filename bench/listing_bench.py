"""The first ``agent-tui sessions --all`` on a folder with no index, against pi's listing.

``run()`` returns ``(label, figure)`` pairs for ``bench/run.py``; run this file directly to
print them (``--sessions``, ``--bytes``, ``--runs``).

The library is search_bench's generator at 200 sessions, 600,000,000 bytes (573 MiB) in 25 cwd
folders (cached in ``bench/data/``). Each figure is the median wall time of whole processes,
stdout to /dev/null:

- first listing: ``agent-tui sessions --all`` with the index deleted before each run (what a
  user with an unindexed data dir waits for): every file summarized, no full-text index;
- listing again: the same with the index in place (a stat per file);
- first search: ``sessions --all --search`` after a first listing: the full-text index is built
  then, from the files the listing summarized (one run: it is the slow one);
- pi: ``SessionManager.listAll()`` (bench/pi_list.mjs), which reads every file on every listing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from run import agent_tui_command, ensure_pi, run_measured  # noqa: E402
from search_bench import ensure_library  # noqa: E402

SESSIONS = 200
BYTES = 600_000_000
RUNS = 5


def _median_s(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f}, N={len(values)})"


def run(sessions: int = SESSIONS, size: int = BYTES, runs: int = RUNS) -> list[tuple[str, str]]:
    root, meta, reused = ensure_library(sessions, size)
    figures = [
        (
            "library",
            f"{sessions:,} sessions, {meta['bytes'] / 2**20:,.0f} MiB"
            + (" (cached)" if reused else f" (generated in {meta['seconds']} s)"),
        )
    ]
    work = Path(tempfile.mkdtemp(prefix="listing-bench-"))
    try:
        home = work / "home"
        home.mkdir()
        (home / "sessions").symlink_to(root)
        env = {**os.environ, "AGENT_TUI_HOME": str(home), "AGENT_TUI_CONFIG": str(work / "none.toml")}
        ours = [*agent_tui_command(), "sessions", "--all"]

        rss: dict[str, list[float]] = {}

        def measured(cmd: list[str], what: str = "") -> float:
            saved = dict(os.environ)
            os.environ.update(env)
            try:
                result = run_measured(cmd, os.devnull)
            finally:
                os.environ.clear()
                os.environ.update(saved)
            if result.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed: {result.stderr.strip()[:200]}")
            rss.setdefault(what, []).append(result.rss_kb / 1024)
            return result.wall

        first, again = [], []
        for _ in range(runs):
            shutil.rmtree(home / "index", ignore_errors=True)
            first.append(measured(ours, "first"))
            again.append(measured(ours))
        peak = f"; peak RSS {statistics.median(rss['first']):.0f} MB"
        figures.append(("first `sessions --all` (no index)", _median_s(first) + peak))
        figures.append(("`sessions --all` again (index current)", _median_s(again)))
        search = measured([*ours, "--search", "xylophone"], "search")
        figures.append(
            (
                "then the first `--search` (builds the text index)",
                f"{search:.1f} s (N=1); peak RSS {rss['search'][0]:.0f} MB",
            )
        )

        node, note = ensure_pi()
        if node is None:
            figures.append(("pi listAll", f"SKIPPED: {note}"))
        else:
            env["PI_CODING_AGENT_DIR"] = str(home)
            pi = [measured([node, str(BENCH / "pi_list.mjs")]) for _ in range(runs)]
            figures.append((f"pi SessionManager.listAll ({note})", _median_s(pi)))
            figures.append(
                (
                    "ratio ours/pi (medians)",
                    f"first {statistics.median(first) / statistics.median(pi):.2f}x, "
                    f"again {statistics.median(again) / statistics.median(pi):.2f}x",
                )
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--bytes", type=int, default=BYTES, help="total size of the library")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    for label, figure in run(args.sessions, args.bytes, args.runs):
        print(f"{label:52s} {figure}")


if __name__ == "__main__":
    main()
