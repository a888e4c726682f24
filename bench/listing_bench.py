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

Then the same 200 files in one folder (symlinks), as a cwd's sessions folder, each figure
measured inside a process of its own by ``picker_probe.py`` (imports left out):

- the resume picker (``/resume``, headless at 80x24): from opening it to the list shown, with
  no index, with the summaries current (after ``agent-tui sessions``) but no text index, and
  with both; and from typing a first search to its complete results (the text index built then);
- ``-c``: finding the folder's latest session, with no index and with the summaries current.

``--code CHECKOUT`` measures those two with another checkout's ``agent_tui`` (e.g. main's,
before a change), the library and the harness staying these.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
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


def _probe(args: list[str], env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, str(BENCH / "picker_probe.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=BENCH,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"picker_probe {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    out: dict[str, float] = json.loads(done.stdout)
    return out


def one_folder(root: Path, work: Path, runs: int, code: Path | None = None) -> list[tuple[str, str]]:
    """The resume picker's and ``-c``'s figures on the library's files in one folder."""
    flat = work / "flat"
    flat.mkdir()
    for path in sorted(root.glob("*/*.jsonl")):
        (flat / path.name).symlink_to(path)
    home = work / "flat-home"
    env = {**os.environ, "AGENT_TUI_HOME": str(home), "AGENT_TUI_CONFIG": str(work / "none.toml")}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    index = home / "index"
    listing = [sys.executable, "-m", "agent_tui", "sessions", "--session-dir", str(flat)]

    def listed() -> None:
        subprocess.run(listing, env=env, cwd=work, stdout=subprocess.DEVNULL, check=True)

    cold, first_search, summaries, current, cont_cold, cont_listed = [], [], [], [], [], []
    for _ in range(max(1, min(runs, 3))):  # with no index the picker may build the text index: slow
        shutil.rmtree(index, ignore_errors=True)
        out = _probe(["picker", str(flat), "xylophone"], env)
        cold.append(out["listed"])
        first_search.append(out["searched"])
        current.append(_probe(["picker", str(flat)], env)["listed"])
    for _ in range(runs):
        shutil.rmtree(index, ignore_errors=True)
        cont_cold.append(_probe(["continue", str(flat)], env)["seconds"])
        listed()
        cont_listed.append(_probe(["continue", str(flat)], env)["seconds"])
        summaries.append(_probe(["picker", str(flat)], env)["listed"])
    shutil.rmtree(index, ignore_errors=True)
    return [
        ("resume picker: listed, no index", _median_s(cold)),
        ("  then its first search (text index built)", _median_s(first_search)),
        ("resume picker: listed, summaries current", _median_s(summaries)),
        ("resume picker: listed, index current", _median_s(current)),
        ("`-c` finds the latest, no index", _median_s(cont_cold)),
        ("`-c` finds the latest, summaries current", _median_s(cont_listed)),
    ]


def run(
    sessions: int = SESSIONS, size: int = BYTES, runs: int = RUNS, code: Path | None = None
) -> list[tuple[str, str]]:
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
        figures.append(("the same files in one folder", f"{sessions:,} sessions"))
        figures.extend(one_folder(root, work, runs, code))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--bytes", type=int, default=BYTES, help="total size of the library")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--code", type=Path, help="measure the picker and -c with this checkout's agent_tui")
    parser.add_argument("--only-one-folder", action="store_true", help="only the picker's and -c's figures")
    args = parser.parse_args()
    if args.only_one_folder:
        root, _, _ = ensure_library(args.sessions, args.bytes)
        work = Path(tempfile.mkdtemp(prefix="listing-bench-"))
        try:
            figures = one_folder(root, work, args.runs, args.code)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    else:
        figures = run(args.sessions, args.bytes, args.runs, args.code)
    for label, figure in figures:
        print(f"{label:52s} {figure}")


if __name__ == "__main__":
    main()
