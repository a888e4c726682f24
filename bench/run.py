"""``make bench``: the issue-2 benchmarks on a 50 MB, 20,000-entry pi session.

Prints (a) in-process open + project, (b) project after one more append,
(c) full tree build, (d) append latency with fsync always/never, (e) whole
``agent-tui context`` vs pi processes (wall time, peak RSS, ratios against
the targets), checks that both print the same context, and ends with a
table. Every figure is a median over N runs with min and max; see
bench/README.md for what each one measures.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = BENCH / "data"
PI_DIR = BENCH / "pi"
PI_PACKAGE = PI_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent"
sys.path.insert(0, str(ROOT))

from agent_tui.cli.session_commands import write_messages_json  # noqa: E402
from agent_tui.projection.context import project, project_path  # noqa: E402
from agent_tui.store.index import SessionIndex  # noqa: E402
from agent_tui.store.reader import read_file  # noqa: E402
from agent_tui.store.session import Session  # noqa: E402
from agent_tui.store.writer import FsyncPolicy  # noqa: E402

try:  # incremental projection (newer agent_tui); the bench runs without it too
    from agent_tui.projection.context import Projector
except ImportError:  # pragma: no cover
    Projector = None  # type: ignore[assignment,misc]
from gen_session import DEFAULT_BYTES, DEFAULT_ENTRIES, DEFAULT_SEED, ensure_session  # noqa: E402

_encode = msgspec.json.Encoder().encode

WALL_TARGET = 0.3  # ours/pi, whole `context` process
RSS_TARGET = 0.5
PROJECT_TARGET_MS = 1.0


# -- statistics and printing --------------------------------------------------------------


@dataclass
class Stat:
    """Samples of one measure, in its display unit."""

    name: str
    unit: str
    samples: list[float]
    target: str = ""
    verdict: str = ""

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def fmt(self, value: float) -> str:
        if self.unit == "MB":
            return f"{value:.1f} MB"
        if self.unit == "x":
            return f"{value:.2f}x"
        if self.unit == "ms":
            return f"{value:.3f} ms" if value < 10 else f"{value:.1f} ms"
        if self.unit == "µs":
            return f"{value:.0f} µs"
        return f"{value:.3g} {self.unit}"

    def line(self, indent: str = "    ") -> str:
        if self.n == 1:
            return f"{indent}{self.name:<54} {self.fmt(self.samples[0]):>11}"
        return (
            f"{indent}{self.name:<54} {self.fmt(self.median):>11}   "
            f"min {self.fmt(min(self.samples)):>10}  max {self.fmt(max(self.samples)):>10}  (N={self.n})"
        )


TABLE: list[Stat] = []


def record(stat: Stat) -> Stat:
    print(stat.line())
    TABLE.append(stat)
    return stat


def ms(seconds: list[float]) -> list[float]:
    return [s * 1000 for s in seconds]


def header(title: str) -> None:
    print(f"\n{title}")


# -- the session ----------------------------------------------------------------------------


def describe_session(path: Path, meta: dict[str, Any], reused: bool, took: float) -> None:
    index = SessionIndex(read_file(path), str(path))
    projection = project(index)
    forks = sum(1 for kids in index.children.values() if len(kids) > 1)
    mb = meta["bytes"] / 1e6
    how = "reused (seed and size match)" if reused else f"generated in {took:.1f} s"
    print(
        f"session: {path.relative_to(ROOT)}  {meta['bytes']:,} bytes ({mb:.1f} MB), {meta['entries']:,} entries, {how}"
    )
    print(
        f"  seed {meta['seed']}; tool results {meta['tool_result_bytes'] / 1e6:.1f} MB "
        f"({meta['tool_result_bytes'] / meta['bytes']:.0%} of the bytes); "
        f"{forks} forks, active path {len(index.active_path()):,} entries, "
        f"context {len(projection.messages):,} messages ({len(projection.summarized_ids):,} entries compacted away)"
    )
    counts = ", ".join(f"{k} {v}" for k, v in meta["counts"].items())
    print(f"  entries: {counts}")


# -- (a) open + project -----------------------------------------------------------------------


def bench_open_project(path: Path, runs: int) -> None:
    header(f"(a) open + project the 50 MB file, in process (read_file + SessionIndex + project), N={runs}")
    keys = ("read_file", "SessionIndex", "project", "total", "json")
    parts: dict[bool, dict[str, list[float]]] = {on: {k: [] for k in keys} for on in (True, False)}
    for _ in range(runs):
        for gc_on in (True, False):  # interleaved, so that load on the machine hits both alike
            gc.collect()
            if not gc_on:
                gc.disable()
            t0 = time.perf_counter()
            loaded = read_file(path)
            t1 = time.perf_counter()
            index = SessionIndex(loaded, str(path))
            t2 = time.perf_counter()
            projection = project(index)
            t3 = time.perf_counter()
            with open(os.devnull, "wb") as out:
                write_messages_json(projection, out)
            t4 = time.perf_counter()
            gc.enable()
            for key, value in zip(keys, (t1 - t0, t2 - t1, t3 - t2, t3 - t0, t4 - t3), strict=True):
                parts[gc_on][key].append(value)
            del loaded, index, projection
    for gc_on in (True, False):
        part = parts[gc_on]
        print(f"  {'gc on (as in the TUI)' if gc_on else 'gc off (as `agent-tui context` runs)'}:")
        print(Stat("read_file", "ms", ms(part["read_file"])).line("      "))
        print(Stat("SessionIndex", "ms", ms(part["SessionIndex"])).line("      "))
        print(Stat("project", "ms", ms(part["project"])).line("      "))
        record(Stat(f"(a) open + project, {'gc on' if gc_on else 'gc off'}", "ms", ms(part["total"])))
        print(Stat("    then write the JSON (to /dev/null)", "ms", ms(part["json"])).line())
    gc.collect()


# -- (b) project after one append ----------------------------------------------------------------


def _user_message(i: int) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": f"Now run the tests again and fix failure #{i}."}],
        "timestamp": int(time.time() * 1000),
    }


def _shape(projection: Any) -> list[tuple[Any, ...]]:
    """What a projection says, entry by entry, without decoding message bodies."""
    return [
        (ce.entry.id, ce.status, ce.edit_id, tuple((m.source_id, m.role, m.kind) for m in ce.messages))
        for ce in projection.entries
    ]


def bench_project_after_append(path: Path, runs: int) -> None:
    header(f"(b) project again after appending one message to an open Session (a copy of the file), N={runs}")
    copy = DATA / "bench-append-b.jsonl"
    shutil.copyfile(path, copy)
    try:
        with Session.open(copy, write=True, fsync=FsyncPolicy.NEVER) as session:
            index = session.index
            if Projector is not None:
                projector = Projector(index)
                projector.project()  # the projection the TUI holds before the append
                samples: list[float] = []
                for i in range(runs):
                    session.append_message(_user_message(i))
                    t0 = time.perf_counter()
                    grown = projector.project()
                    samples.append(time.perf_counter() - t0)
                stat = Stat(
                    "(b) Projector.project() after one append",
                    "ms",
                    ms(samples),
                    f"< {PROJECT_TARGET_MS:g} ms",
                )
                stat.verdict = "PASS" if stat.median < PROJECT_TARGET_MS else "MISS"
                record(stat)
                same = _shape(grown) == _shape(project(index))
                print(f"      incremental projection equals a full one: {'yes' if same else 'NO'}")
            else:
                print(
                    "    (no Projector in agent_tui.projection.context: only the full projection is measured)"
                )

            project(index)  # warm: message heads decoded once, as they are in a running session
            samples = []
            for i in range(runs):
                session.append_message(_user_message(runs + i))
                t0 = time.perf_counter()
                project(index)
                samples.append(time.perf_counter() - t0)
            stat = Stat(
                "(b) project() after one append (full walk)", "ms", ms(samples), f"< {PROJECT_TARGET_MS:g} ms"
            )
            stat.verdict = "PASS" if stat.median < PROJECT_TARGET_MS else "MISS"
            record(stat)
            if stat.verdict == "MISS":
                over = stat.median / PROJECT_TARGET_MS
                print(f"    full project(): MISS, {over:.0f}x over the 1 ms target. Where it goes:")
                # Split without a profiler: walking to the root, then the pipeline over the path.
                leaf = index.leaf_id
                walk = _repeat(lambda: index.path_to(leaf), runs)
                path_entries = index.path_to(leaf)
                pipeline = _repeat(lambda: project_path(path_entries, leaf), runs)
                print(
                    Stat(f"index.path_to(leaf) ({len(path_entries):,} entries)", "ms", ms(walk)).line(
                        "      "
                    )
                )
                print(Stat("project_path(path) (the pipeline)", "ms", ms(pipeline)).line("      "))
                _profile(lambda: project(index), 20)
    finally:
        copy.unlink(missing_ok=True)


def _repeat(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _profile(fn: Callable[[], object], calls: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = []
    total = 0.0
    for (file, line, func), (_cc, ncalls, tottime, _ct, _callers) in stats.items():
        total += tottime
        where = f"{Path(file).name}:{line} {func}" if line else func
        rows.append((tottime, ncalls // calls, where))
    rows.sort(reverse=True)
    print(f"      cProfile over {calls} calls (own time, share, calls per projection):")
    for tottime, ncalls, where in rows[:8]:
        print(f"        {tottime / total:5.1%}  {ncalls:>7,}x  {where}")


# -- (c) tree ----------------------------------------------------------------------------------


def bench_tree(path: Path, runs: int) -> None:
    header(f"(c) full tree build on a fresh index: index.children + roots() + a walk of every root, N={runs}")
    loaded = read_file(path)
    parts: dict[str, list[float]] = {"children": [], "roots": [], "walk": [], "total": []}
    visited = 0
    for _ in range(runs):
        index = SessionIndex(loaded, str(path))
        gc.collect()
        t0 = time.perf_counter()
        _ = index.children
        t1 = time.perf_counter()
        roots = index.roots()
        t2 = time.perf_counter()
        visited = sum(1 for root in roots for _ in index.walk(root))
        t3 = time.perf_counter()
        parts["children"].append(t1 - t0)
        parts["roots"].append(t2 - t1)
        parts["walk"].append(t3 - t2)
        parts["total"].append(t3 - t0)
    print(Stat("index.children", "ms", ms(parts["children"])).line("      "))
    print(Stat("roots() (includes a reachability walk)", "ms", ms(parts["roots"])).line("      "))
    print(Stat(f"walk ({visited:,} nodes)", "ms", ms(parts["walk"])).line("      "))
    record(Stat("(c) full tree build", "ms", ms(parts["total"])))


# -- (d) append latency --------------------------------------------------------------------------


def _sample_outputs(path: Path) -> tuple[str, str]:
    """A ~4 KB and a ~48 KB file read from the benchmark session (deterministic with it)."""
    small = large = None
    with open(path, "rb") as f:
        for line in f:
            if b'"toolName":"read"' not in line:
                continue
            entry = msgspec.json.decode(line)
            text = entry["message"]["content"][0]["text"]
            if small is None and 3800 <= len(text) <= 4400:
                small = text
            if large is None and len(text) >= 45_000:
                large = text[:49_000]
            if small is not None and large is not None:
                return small, large
    raise RuntimeError(f"{path}: no tool outputs of the sizes (d) appends")


def _append_messages(path: Path) -> list[tuple[str, dict[str, Any]]]:
    call_id = "toolu_01BenchBenchBenchBenchBe"
    assistant = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look at the writer before changing the lock handling. " * 6},
            {
                "type": "toolCall",
                "id": call_id,
                "name": "read",
                "arguments": {"path": "agent_tui/store/writer.py"},
            },
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 812,
            "output": 164,
            "cacheRead": 90_412,
            "cacheWrite": 1_204,
            "totalTokens": 92_592,
            "cost": {
                "input": 0.002436,
                "output": 0.00246,
                "cacheRead": 0.0271236,
                "cacheWrite": 0.004515,
                "total": 0.0365346,
            },
        },
        "stopReason": "toolUse",
        "timestamp": 0,
    }
    small, large = _sample_outputs(path)
    out: list[tuple[str, dict[str, Any]]] = [
        (f"assistant {len(_encode(assistant)) / 1024:.0f} KB", assistant)
    ]
    for text in (small, large):
        result = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": 0,
        }
        out.append((f"toolResult {len(_encode(result)) / 1024:.0f} KB", result))
    return out


def fs_of(path: Path) -> str:
    best = ("?", "?", "")
    try:
        with open("/proc/mounts") as f:
            for line in f:
                device, mount, fstype = line.split()[:3]
                if str(path).startswith(mount) and len(mount) >= len(best[2]):
                    best = (device, fstype, mount)
    except OSError:
        return "unknown filesystem"
    return f"{best[1]} on {best[0]}"


def bench_append(path: Path, runs_always: int, runs_never: int) -> None:
    messages = _append_messages(path)
    kinds = ", ".join(name for name, _ in messages)
    header(f"(d) Session.append_message latency on a copy of the file ({fs_of(DATA)}); appends cycle {kinds}")
    cases = [(FsyncPolicy.ALWAYS, runs_always, True), (FsyncPolicy.NEVER, runs_never, True)]
    redacts = importlib.util.find_spec("agent_tui.store.redact") is not None
    if redacts:  # secret redaction (AGENT_TUI_REDACT) runs before every write: show its share
        cases.append((FsyncPolicy.NEVER, runs_never, False))
    for policy, runs, redact in cases:
        copy = DATA / f"bench-append-d-{policy.value}.jsonl"
        shutil.copyfile(path, copy)
        samples: dict[str, list[float]] = {name: [] for name, _ in messages}
        try:
            with Session.open(copy, write=True, fsync=policy) as session:
                if redacts:
                    session.redact = redact
                for i in range(runs):
                    name, message = messages[i % len(messages)]
                    message = {**message, "timestamp": int(time.time() * 1000)}
                    t0 = time.perf_counter()
                    session.append_message(message)
                    samples[name].append(time.perf_counter() - t0)
        finally:
            copy.unlink(missing_ok=True)
        setting = f"fsync={policy.value}" + ("" if redact or not redacts else ", no redaction")
        for name, values in samples.items():
            record(Stat(f"(d) append {name}, {setting}", "ms", ms(values)))


# -- (e) whole processes -----------------------------------------------------------------------------

TIME_BIN = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


@dataclass
class ProcResult:
    wall: float  # seconds
    rss_kb: int  # peak resident set of the measured process
    cpu: float  # user + system seconds of the measured process (and its threads)
    returncode: int
    stderr: str


def run_measured(cmd: list[str], stdout_path: str) -> ProcResult:
    """Run ``cmd`` once, stdout to ``stdout_path``: wall time, and peak RSS from /usr/bin/time %M.

    Without /usr/bin/time, ``proc_stats.py`` spawns the command from a small
    process and reads ``ru_maxrss`` from os.wait4 (see its docstring for why
    not from here).
    """
    with tempfile.TemporaryDirectory() as tmp:
        err_path = Path(tmp) / "stderr"
        if TIME_BIN:
            rss_path = Path(tmp) / "rss"
            with open(err_path, "wb") as err, open(stdout_path, "wb") as out:
                t0 = time.perf_counter()
                proc = subprocess.Popen(
                    [TIME_BIN, "-f", "%M", "-o", str(rss_path), *cmd],
                    stdout=out,
                    stderr=err,
                    stdin=subprocess.DEVNULL,
                )
                # wait4's CPU times include the command (reaped by time); its ru_maxrss does not
                # (it would be this process's peak, inherited across fork): that comes from %M.
                _, status, usage = os.wait4(proc.pid, 0)
                wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            rss = int(rss_path.read_text().split()[-1])
            cpu = usage.ru_utime + usage.ru_stime
            return ProcResult(wall, rss, cpu, proc.returncode, err_path.read_text(errors="replace"))
        with open(err_path, "wb") as err:
            done = subprocess.run(
                [sys.executable, "-I", str(BENCH / "proc_stats.py"), stdout_path, *cmd],
                stdout=subprocess.PIPE,
                stderr=err,
                stdin=subprocess.DEVNULL,
                check=True,
            )
        stats = json.loads(done.stdout)
        return ProcResult(
            stats["wall"],
            stats["maxrss_kb"],
            stats["cpu"],
            stats["returncode"],
            err_path.read_text(errors="replace"),
        )


def ensure_pi() -> tuple[str | None, str]:
    """(node binary or None, a note on versions or why pi is skipped)."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not installed (no `node` on PATH)"
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if not (PI_PACKAGE / "package.json").exists():
        npm = shutil.which("npm")
        if npm is None:
            return None, f"bench/pi/node_modules is missing and npm is not installed (node {version})"
        print("installing pi: npm ci --no-audit --no-fund (in bench/pi)")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=PI_DIR, capture_output=True, text=True
        )
        if done.returncode != 0 or not (PI_PACKAGE / "package.json").exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
            return None, f"npm ci failed in bench/pi: {tail[0]}"
    pi_version = json.loads((PI_PACKAGE / "package.json").read_text()).get("version", "?")
    return node, f"node {version}, pi {pi_version}"


def agent_tui_command() -> list[str]:
    script = Path(sys.executable).parent / "agent-tui"
    if script.exists():
        return [str(script)]
    found = shutil.which("agent-tui")
    return [found] if found else [sys.executable, "-m", "agent_tui"]


def first_difference(a: Any, b: Any, where: str = "$") -> str:
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        return f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}.{key}: only in {'ours' if key in a else 'pi'}"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{where}.{key}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    return f"{where}: {str(a)[:80]!r} vs {str(b)[:80]!r}"


def bench_processes(path: Path, runs: int) -> None:
    ours_cmd = [*agent_tui_command(), "context", str(path), "--format", "json"]
    rss_how = "/usr/bin/time %M" if TIME_BIN else "os.wait4 ru_maxrss via bench/proc_stats.py"
    header(f"(e) whole processes on the same file, stdout to /dev/null; wall time and peak RSS ({rss_how})")
    node, note = ensure_pi()
    print(f"    ours: {' '.join(Path(c).name if i == 0 else c for i, c in enumerate(ours_cmd))}")
    compiled = any((ROOT / "agent_tui" / "cli" / "__pycache__").glob("main.*.pyc"))
    print(
        "    bytecode: "
        + (
            "compiled, as a regular install has it (make bench runs compileall)"
            if compiled
            else "NOT compiled"
        )
    )
    pi_cmd = [node, str(BENCH / "pi_context.mjs"), str(path)] if node else None
    if pi_cmd:
        print(f"    pi:   node bench/pi_context.mjs FILE   ({note})")
    else:
        print(f"    pi comparison SKIPPED: {note}")
        TABLE.append(Stat("pi comparison", "", [0.0], "", f"SKIPPED: {note}"))

    # Start-up alone, on a one-message session: the fixed part of each figure below.
    tiny = DATA / "bench-tiny.jsonl"
    tiny.write_text(
        '{"type":"session","version":3,"id":"bench-tiny","timestamp":"2025-03-10T09:00:00.000Z","cwd":"/tmp"}\n'
        '{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-03-10T09:00:01.000Z",'
        '"message":{"role":"user","content":"hi","timestamp":1741597201000}}\n'
    )
    for name, cmd in (("agent-tui", ours_cmd), ("pi (node)", pi_cmd)):
        if cmd is None:
            continue
        cmd = [str(tiny) if c == str(path) else c for c in cmd]
        startup = [run_measured(cmd, os.devnull) for _ in range(5)]
        wall = Stat(f"start-up, 1-message session: {name}", "ms", [r.wall * 1000 for r in startup])
        print(f"{wall.line()}   peak RSS {statistics.median(r.rss_kb for r in startup) / 1024:.1f} MB")
    tiny.unlink()

    # Once with the outputs kept: checks that both print the same context (and warms the page cache).
    outputs: dict[str, Any] = {}
    for name, cmd in (("ours", ours_cmd), ("pi", pi_cmd)):
        if cmd is None:
            continue
        out_path = DATA / f"bench-context-{name}.json"
        result = run_measured(cmd, str(out_path))
        if result.returncode != 0:
            print(f"    {name} failed (exit {result.returncode}): {result.stderr.strip()[:300]}")
            out_path.unlink(missing_ok=True)
            return
        outputs[name] = msgspec.json.decode(out_path.read_bytes())
        out_path.unlink()
    if pi_cmd:
        same = outputs["ours"] == outputs["pi"]
        detail = "" if same else f"  (first difference: {first_difference(outputs['ours'], outputs['pi'])})"
        print(
            f"    outputs identical: {'yes' if same else 'no'}  ({len(outputs['ours']):,} messages each){detail}"
        )
        TABLE.append(Stat("outputs identical", "", [1.0 if same else 0.0], "yes", "yes" if same else "no"))
    outputs.clear()

    walls: dict[str, list[float]] = {"ours": [], "pi": []}
    cpus: dict[str, list[float]] = {"ours": [], "pi": []}
    rss: dict[str, list[float]] = {"ours": [], "pi": []}
    load_before = os.getloadavg()[0]
    for _ in range(runs):  # alternate, so that drift in the machine hits both alike
        for name, cmd in (("ours", ours_cmd), ("pi", pi_cmd)):
            if cmd is None:
                continue
            result = run_measured(cmd, os.devnull)
            if result.returncode != 0:
                print(f"    {name} failed (exit {result.returncode}): {result.stderr.strip()[:300]}")
                return
            walls[name].append(result.wall * 1000)
            cpus[name].append(result.cpu * 1000)
            rss[name].append(result.rss_kb / 1024)
    load = max(load_before, os.getloadavg()[0])
    for name, title in (("ours", "agent-tui context"), ("pi", "pi (node)")):
        if name == "pi" and not pi_cmd:
            return
        record(Stat(f"(e) {title}: wall", "ms", walls[name]))
        print(Stat(f"(e) {title}: CPU (user + sys)", "ms", cpus[name]).line())
        record(Stat(f"(e) {title}: peak RSS", "MB", rss[name]))
    for what, data, target in (
        ("wall", walls, WALL_TARGET),
        ("peak RSS", rss, RSS_TARGET),
        ("CPU", cpus, None),
    ):
        ratio = statistics.median(data["ours"]) / statistics.median(data["pi"])
        per_run = [o / p for o, p in zip(data["ours"], data["pi"], strict=True)]
        stat = Stat(
            f"(e) ratio ours/pi, {what} (of medians)", "x", [ratio], f"< {target:g}x" if target else ""
        )
        if target:
            stat.verdict = "PASS" if ratio < target else "MISS"
        verdict = f"target < {target:g}x: {stat.verdict}" if target else "(no target; steadier under load)"
        print(f"{stat.line()}   {verdict}   (paired runs: {min(per_run):.2f}x .. {max(per_run):.2f}x)")
        TABLE.append(stat)
    cpus_n = os.cpu_count() or 1
    if load > cpus_n / 2:
        print(
            f"    note: the machine was busy (1-min load average up to {load:.1f} on {cpus_n} CPUs): wall times"
            " are inflated and noisier than on an idle machine; the CPU-time ratio is the steadier figure"
        )


# -- main ------------------------------------------------------------------------------------------


def print_table() -> None:
    print("\nSummary")
    print(f"  {'measure':<54} {'N':>3} {'median':>11} {'min':>11} {'max':>11}  {'target':<9} result")
    for s in TABLE:
        if s.unit == "":
            print(f"  {s.name:<54} {'':>3} {'':>11} {'':>11} {'':>11}  {s.target:<9} {s.verdict}")
            continue
        lo = s.fmt(min(s.samples)) if s.n > 1 else ""
        hi = s.fmt(max(s.samples)) if s.n > 1 else ""
        n = str(s.n) if s.n > 1 else ""
        print(f"  {s.name:<54} {n:>3} {s.fmt(s.median):>11} {lo:>11} {hi:>11}  {s.target:<9} {s.verdict}")


#: The other benchmarks: modules in bench/ with ``run() -> list[tuple[label, figure]]``.
EXTRA_BENCHES = [
    ("token estimator", "token_estimate"),
    ("session search over 1,000 sessions / 1 GiB", "search_bench"),
    ("first `sessions` listing of 200 sessions / 573 MiB, no index; pi's listing", "listing_bench"),
    ("TUI: first paint and keystroke latency", "tui_bench"),
    ("TUI: opening one 20 MB message", "big_message_bench"),
    ("TUI: the first message after Enter; the exit when the terminal goes", "app_lifecycle_bench"),
    ("prune old tool output on the 50 MB session (no model call)", "prune_bench"),
    ("open + project through the sidecar offset index; pi side by side", "sidecar_bench"),
    ("a 1 GB session: open in process, the app's first frame at 80x24; pi side by side", "big_session_bench"),
    ("start: `-p hi` whole process against pi 1.6 on the same fake server", "start_bench"),
    ("streaming: the server's chunk to each face's delta, redaction on", "stream_latency_bench"),
    ("file checkpoints: a 10,000-file project, 3 files changed", "checkpoint_bench"),
]


def bench_extras() -> None:
    import importlib

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    for title, module in EXTRA_BENCHES:
        header(title)
        try:
            rows = importlib.import_module(module).run()
        except Exception as e:  # one broken benchmark must not hide the others
            print(f"    failed: {type(e).__name__}: {e}")
            continue
        for label, figure in rows:
            print(f"    {label:<58} {figure}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--runs", type=int, default=15, help="runs of the in-process measures (a), (c)")
    parser.add_argument(
        "--process-runs", type=int, default=11, help="runs of each process in (e), at least 5"
    )
    parser.add_argument(
        "--rusage", action="store_true", help="measure peak RSS with os.wait4 even if /usr/bin/time exists"
    )
    args = parser.parse_args(argv)
    if args.rusage:
        global TIME_BIN
        TIME_BIN = None
    started = time.perf_counter()

    print("agent-tui benchmarks")
    print(
        f"machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}, msgspec {msgspec.__version__}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    t0 = time.perf_counter()
    path, meta, reused = ensure_session(DATA, args.seed, DEFAULT_ENTRIES, DEFAULT_BYTES)
    describe_session(path, meta, reused, time.perf_counter() - t0)

    bench_open_project(path, args.runs)
    bench_project_after_append(path, 50)
    bench_tree(path, args.runs)
    bench_append(path, 150, 300)
    bench_processes(path, max(5, args.process_runs))

    print_table()
    bench_extras()
    print(f"\n(total bench time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
