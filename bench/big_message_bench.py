"""Opening a session holding one very big message in the app.

``python bench/big_message_bench.py [--mb 20] [--runs 3] [--json]`` or, from ``bench/run.py``,
``run()``. Each run is a fresh process (so its peak RSS is the run's own): it writes a session
whose last reply (or user message) is MB megabytes of markdown lines, builds the app headless at
160x50 and waits for the first frame with the session in it and then for the app to be idle
(every pending callback and refresh done). A tiny session is measured the same way as the
baseline, the cost of starting the app at all.

Target: a 20 MB message opens in under 2 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TARGET_SECONDS = 2.0

_CHILD = r"""
import asyncio, json, resource, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/bench")
from tests.session_builder import Builder, assistant, user
from agent_tui.tui.app import AgentTuiApp
from tui_bench import SIZE, _config

mb, role = float(sys.argv[2]), sys.argv[3]
line = "A line of a very long reply, with **markdown** and `code` in it, number {}.\n"
text = "".join(line.format(i) for i in range(int(mb * 1_000_000) // len(line))) or "hello"
b = Builder()
b.message(user("go"))
b.message(assistant(text) if role == "assistant" else user(text))

async def once(path, tmp):
    started = time.perf_counter()
    app = AgentTuiApp(_config(tmp, path))
    async with app.run_test(size=SIZE) as pilot:
        while app.first_paint_at is None:
            await pilot.pause(0.005)
        painted = time.perf_counter() - started
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        return painted, time.perf_counter() - started

with tempfile.TemporaryDirectory() as tmp:
    path = b.write(Path(tmp) / "big.jsonl")
    painted, idle = asyncio.run(once(path, Path(tmp)))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"painted": painted, "idle": idle, "rss_mb": rss, "bytes": path.stat().st_size}))
"""


def measure(mb: float, role: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), str(mb), role],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def run_big_message_bench(mb: float = 20, runs: int = 3) -> dict[str, Any]:
    results: dict[str, Any] = {"mb": mb, "runs": runs}
    for name, size, role in (("baseline", 0, "user"), ("reply", mb, "assistant"), ("user", mb, "user")):
        samples = [measure(size, role) for _ in range(runs)]
        results[name] = {
            key: statistics.median(s[key] for s in samples) for key in ("painted", "idle", "rss_mb", "bytes")
        }
    return results


def rows(results: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    base = results["baseline"]
    for name, what in (
        ("baseline", "a tiny session (the app's own start)"),
        ("reply", "reply"),
        ("user", "user message"),
    ):
        r = results[name]
        label = what if name == "baseline" else f"one {results['mb']:g} MB {what}"
        figure = (
            f"first paint {r['painted']:.2f} s, idle {r['idle']:.2f} s, peak RSS {r['rss_mb']:.0f} MB"
            f" (median of {results['runs']})"
        )
        if name != "baseline":
            verdict = "PASS" if r["idle"] < TARGET_SECONDS else "MISS"
            figure += f"; {r['idle'] - base['idle']:+.2f} s over the baseline  target < 2 s  {verdict}"
        out.append((f"open {label}", figure))
    return out


def run() -> list[tuple[str, str]]:
    return rows(run_big_message_bench())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run_big_message_bench(args.mb, args.runs)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for label, figure in rows(results):
            print(f"  {label:<44} {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
