"""Opening a 1 GiB session: the store + projection in process, and the app's first frame.

The session is ``gen_big_session.py``'s (about 150,000 entries, 1.07 GB: big tool outputs,
screenshots as base64 images, 36 compactions, four branches), written once to
``/tmp/agent-tui-bench`` and reused while the generator and its size are the same.

(a) **in process**, each open in a fresh process of its own (``--probe``), so that its peak RSS
    (``VmHWM``) is its own: ``sidecar.load`` + ``SessionIndex`` + ``project``, cold (no sidecar:
    a full parse that writes it) and warm (the sidecar valid), alternated.
(b) **the app's first frame**: ``agent-tui --session FILE`` started in tmux at 80x24 (its bytecode
    current, as an install has it), timed from ``tmux new-session`` until the screen shows the
    conversation's tail (the last answer's last line, ``TAILMARK1GB``), read every 25 ms; its peak
    RSS (``VmHWM`` of the app's process) then, and ``--settle`` s later (the panel's token counts
    and the other work after the first frame). Warm and cold (the sidecar deleted first), alternated.
(d) **the tail-first read** (``store.tail.leaf_path``, each in a process of its own): the branch
    from the leaf up to the latest compaction's first kept entry, read backwards from the file's
    end; its wall and CPU time, how many entries and MB from the end it read (with (a)).
(c) **pi 1.6** on the same file: ``node pi_context.mjs FILE`` (``SessionManager.open`` + project
    + ``convertToLlm``), wall time and peak RSS (``/usr/bin/time``), or the line it fails with.

Goals (issue 25): the first frame in under 1.5 s with under 300 MB peak RSS.

    .venv/bin/python bench/big_session_bench.py [--runs N] [--cold-runs N] [--no-pi] [--no-app]
        [--no-inproc] [--settle S] [--dir D]

``--no-inproc`` skips (a) and (d); ``--dir D``: where the session is generated and kept; ``--settle S``: the last peak RSS read S seconds after the frame (3).

Part of ``make bench`` (``run()``).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from gen_big_session import DEFAULT_DIR, TAIL_MARKER, ensure_big_session  # noqa: E402

FRAME_GOAL_S = 1.5
RSS_GOAL_MB = 300.0
POLL_SECONDS = 0.025
SETTLE_SECONDS = 3.0
MARKER = TAIL_MARKER.split()[-1]


def _hwm_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def probe(path: Path) -> dict[str, float]:
    """One open in this process: the parts' times in ms, and the peak RSS in MB."""
    from agent_tui.projection.context import project
    from agent_tui.store import sidecar
    from agent_tui.store.index import SessionIndex

    had_sidecar = sidecar.sidecar_path(path).exists()
    t0 = time.perf_counter()
    loaded, _ = sidecar.load(path)
    t1 = time.perf_counter()
    index = SessionIndex(loaded, str(path))
    t2 = time.perf_counter()
    projection = project(index)
    t3 = time.perf_counter()
    assert projection.messages, "nothing projected"
    return {
        "mapped": float(type(loaded.entries[0]) is sidecar.MappedEntry),  # (a cold build too, over 32 MB)
        "had_sidecar": float(had_sidecar),
        "load": (t1 - t0) * 1000,
        "index": (t2 - t1) * 1000,
        "project": (t3 - t2) * 1000,
        "total": (t3 - t0) * 1000,
        "rss": _hwm_mb(),
    }


def tail_probe(path: Path) -> dict[str, float]:
    """The tail-first read in this process (``store.tail.leaf_path``): the branch from the leaf up to
    the latest compaction's first kept entry, what a first frame needs of it; wall and CPU ms."""
    import resource

    from agent_tui.store import tail

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    t0, c0 = time.perf_counter(), cpu()
    reader = tail.TailReader.open(path)
    assert reader is not None, "not a v3 file"
    with reader:
        got = tail.leaf_path(reader)
    return {
        "total": (time.perf_counter() - t0) * 1000,
        "cpu": (cpu() - c0) * 1000,
        "entries": float(len(got.entries)),
        "read_mb": (reader.size - got.start) / 1e6,
        "rss": _hwm_mb(),
    }


def _probe_process(path: Path, flag: str = "--probe") -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), flag, str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe failed: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _sidecar_gone(path: Path) -> None:
    from agent_tui.store import sidecar

    sidecar.sidecar_path(path).unlink(missing_ok=True)


def _order(runs: int, cold_runs: int) -> list[str]:
    """Cold and warm alternated (a cold open writes the sidecar the warm one after it reads)."""
    order: list[str] = []
    for i in range(max(runs, cold_runs)):
        if i < cold_runs:
            order.append("cold")
        if i < runs:
            order.append("warm")
    return order


def in_process(path: Path, runs: int, cold_runs: int) -> dict[str, list[dict[str, float]]]:
    out: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
    _probe_process(path)  # the sidecar, and the file in the page cache
    for kind in _order(runs, cold_runs):
        if kind == "cold":
            _sidecar_gone(path)
        got = _probe_process(path)
        assert got["mapped"] and got["had_sidecar"] == (kind == "warm"), f"the {kind} open: {got}"
        out[kind].append(got)
    return out


def _cpu_seconds(pid: int | str) -> float:
    """User + system CPU time of a process (all its threads) so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _first_frame_once(
    tmux: str, path: Path, tmp: Path, name: str, settle: float = SETTLE_SECONDS
) -> tuple[float, float, float, float] | str:
    """(seconds to the tail on screen, peak RSS MB then, peak RSS MB after SETTLE_SECONDS, the
    app's CPU seconds to then: on a loaded machine the wall time is mostly waiting for a core)."""
    exe = Path(sys.executable).parent / "agent-tui"
    pid_file = tmp / f"{name}.pid"
    pid_file.unlink(missing_ok=True)
    command = (
        f"echo $$ > {pid_file}; exec env AGENT_TUI_HOME={tmp}/home AGENT_TUI_CONFIG={tmp}/config.toml "
        f"{exe} --session {path} --session-dir {tmp}/sessions"
    )
    start = time.perf_counter()
    subprocess.run([tmux, "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command], check=True)
    try:
        deadline = start + 120
        while time.perf_counter() < deadline:
            screen = subprocess.run(
                [tmux, "capture-pane", "-p", "-t", name], capture_output=True, text=True
            ).stdout
            if MARKER in screen:
                took = time.perf_counter() - start
                pid = pid_file.read_text().strip()
                cpu = _cpu_seconds(pid)
                at_frame = _hwm_mb(pid)
                time.sleep(settle)
                return took, at_frame, _hwm_mb(pid), cpu
            time.sleep(POLL_SECONDS)
        return f"the screen never showed {MARKER!r}: {screen.strip()[-200:]!r}"
    finally:
        subprocess.run([tmux, "kill-session", "-t", name], capture_output=True)


def first_frame(
    path: Path, runs: int, cold_runs: int, settle: float = SETTLE_SECONDS
) -> dict[str, list[tuple[float, float, float, float]]] | str:
    tmux = shutil.which("tmux")
    if tmux is None:
        return "tmux not installed"
    compileall.compile_dir(ROOT / "agent_tui", quiet=1)  # what `make bytecode` does
    out: dict[str, list[tuple[float, float, float, float]]] = {"cold": [], "warm": []}
    keep = "agent-tui-big-keep"  # keeps the tmux server up between the runs (see tui_bench.py)
    subprocess.run([tmux, "new-session", "-d", "-s", keep, "sleep 900"], capture_output=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            warm_up = _first_frame_once(tmux, path, Path(tmp), "agent-tui-big-0")
            if isinstance(warm_up, str):
                return warm_up
            for i, kind in enumerate(_order(runs, cold_runs), 1):
                if kind == "cold":
                    _sidecar_gone(path)
                got = _first_frame_once(tmux, path, Path(tmp), f"agent-tui-big-{i}", settle)
                if isinstance(got, str):
                    return got
                out[kind].append(got)
    finally:
        subprocess.run([tmux, "kill-session", "-t", keep], capture_output=True)
    return out


def pi_open(path: Path, runs: int) -> list[tuple[float, float]] | str:
    from run import ensure_pi, run_measured

    node, note = ensure_pi()
    if not node:
        return f"skipped ({note})"
    out: list[tuple[float, float]] = []
    for _ in range(runs):
        result = run_measured([node, str(BENCH / "pi_context.mjs"), str(path)], os.devnull)
        if result.returncode != 0:
            return f"fails: {result.stderr.strip().splitlines()[-1][:160] if result.stderr.strip() else result.returncode}"
        out.append((result.wall * 1000, result.rss_kb / 1024))
    return out


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs):,.0f} ms (min {min(xs):,.0f}, max {max(xs):,.0f}, N={len(xs)})"


def _mb(xs: list[float]) -> str:
    return f"{statistics.median(xs):,.0f} MB (min {min(xs):,.0f}, max {max(xs):,.0f})"


def measure(
    runs: int = 5,
    cold_runs: int = 3,
    with_app: bool = True,
    with_pi: bool = True,
    with_inproc: bool = True,
    settle: float = SETTLE_SECONDS,
    data_dir: Path = DEFAULT_DIR,
) -> list[tuple[str, str]]:
    t0 = time.perf_counter()
    path, meta, reused = ensure_big_session(data_dir)
    how = "reused" if reused else f"written in {time.perf_counter() - t0:.0f} s"
    rows: list[tuple[str, str]] = [
        (
            "session",
            f"{path} ({how}): {meta['bytes'] / 1e9:.2f} GB, {meta['entries']:,} entries, "
            f"{meta['images']} images, {meta['huge_outputs']} outputs of 2-8 MB, "
            f"{meta['compactions']} compactions, {meta['branches']} branches",
        ),
        ("load average", f"{os.getloadavg()[0]:.1f}"),
    ]
    inproc = in_process(path, runs, cold_runs) if with_inproc else {"cold": [], "warm": []}
    for kind in ("cold", "warm") if with_inproc else ():
        got = inproc[kind]
        label = (
            "cold (no sidecar: parsed in 8 MiB chunks, writes it)"
            if kind == "cold"
            else "warm (sidecar valid)"
        )
        rows.append((f"(a) open + project in process, {label}", _ms([g["total"] for g in got])))
        parts = " / ".join(
            f"{statistics.median([g[k] for g in got]):,.0f}" for k in ("load", "index", "project")
        )
        rows.append(("    of which sidecar.load / SessionIndex / project, ms", parts))
        rows.append(("    peak RSS", _mb([g["rss"] for g in got])))
    if with_inproc:
        tails = [_probe_process(path, "--tail-probe") for _ in range(max(3, cold_runs))]
        rows.append(
            (
                "(d) tail-first read: leaf to the latest compaction's first kept entry",
                f"{_ms([g['total'] for g in tails])}, CPU {_ms([g['cpu'] for g in tails])}",
            )
        )
        rows.append(
            (
                "    entries, MB read from the end, peak RSS",
                f"{tails[0]['entries']:,.0f}, {tails[0]['read_mb']:,.1f} MB, {_mb([g['rss'] for g in tails])}",
            )
        )
    if with_app:
        frames = first_frame(path, runs, cold_runs, settle)
        if isinstance(frames, str):
            rows.append(("(b) app first frame", frames))
        else:
            for kind in ("warm", "cold"):
                got = frames[kind]
                if not got:
                    continue
                secs = [g[0] for g in got]
                rss = [g[1] for g in got]
                med = statistics.median(secs)
                verdict = "PASS" if med < FRAME_GOAL_S else "MISS"
                rows.append(
                    (
                        f"(b) app first frame at 80x24, {kind}, goal < {FRAME_GOAL_S} s",
                        f"{_ms([s * 1000 for s in secs])} {verdict}",
                    )
                )
                rss_verdict = "PASS" if statistics.median(rss) < RSS_GOAL_MB else "MISS"
                rows.append(
                    (
                        f"    peak RSS at the first frame, goal < {RSS_GOAL_MB:.0f} MB",
                        f"{_mb(rss)} {rss_verdict}",
                    )
                )
                later = _mb([g[2] for g in got])
                rows.append(
                    (
                        f"    peak RSS {settle:g} s later",
                        f"{later} {'PASS' if statistics.median([g[2] for g in got]) < RSS_GOAL_MB else 'MISS'}",
                    )
                )
                rows.append(("    the app's CPU time to the first frame", _ms([g[3] * 1000 for g in got])))
    if with_pi:
        pi = pi_open(path, max(1, cold_runs))
        if isinstance(pi, str):
            rows.append(("(c) pi_context.mjs", pi))
        else:
            rows.append(("(c) pi_context.mjs: wall", _ms([w for w, _ in pi])))
            rows.append(("    peak RSS", _mb([r for _, r in pi])))
    return rows


def run() -> list[tuple[str, str]]:
    """For ``make bench`` (bench/run.py's EXTRA_BENCHES)."""
    return measure()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="warm runs, at least 5")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--no-pi", action="store_true")
    parser.add_argument("--no-app", action="store_true")
    parser.add_argument("--no-inproc", action="store_true", help="skip (a): the app (and pi) only")
    parser.add_argument(
        "--settle", type=float, default=SETTLE_SECONDS, help="seconds after the frame to the last RSS read"
    )
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where the big session is kept")
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tail-probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe is not None:
        print(json.dumps(probe(args.probe)))
        return 0
    if args.tail_probe is not None:
        print(json.dumps(tail_probe(args.tail_probe)))
        return 0
    figures = measure(
        max(5, args.runs),
        args.cold_runs,
        not args.no_app,
        not args.no_pi,
        not args.no_inproc,
        args.settle,
        args.dir,
    )
    for label, figure in figures:
        print(f"    {label:<62} {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
