"""Disk full and read-only places.

Disk full is simulated with ``RLIMIT_FSIZE`` (and ``SIGXFSZ`` ignored, so the
write fails with EFBIG instead of killing the process): the file may grow by
only so many bytes more, so an append in the middle of a turn is cut short.
The agent loop must report it as one line and stop the turn, and what it holds
in memory must be exactly what a fresh load of the file gives.

Read-only: a session folder the user cannot write to, and a session file they
cannot append to. ``chmod`` does not restrict root, so when the tests run as
root these commands run as ``nobody`` (through ``setpriv``) on files root owns.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agent_tui
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session
from tests.support.campaign_support import STRESS, report, request_problems, scale
from tests.support.fake_model_server import (
    FakeModelServer,
    RecordedRequest,
    Response,
    anthropic_stream,
    text,
    tool_use,
)
from tests.support.limits import limit_file_size

pytestmark = [pytest.mark.timeout(scale(120, 1800)), pytest.mark.slow]
ROOM = [40, 1100, 1500, 2600, 5000] if not STRESS else list(range(20, 5000, 60))

SCRIPT = r"""
import asyncio, json, os, resource, signal, sys
from agent_tui.agent.events import EntryAppended, TurnDone, TurnError
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.config import Config, RetryPolicy
from agent_tui.store.session import Session

path, base_url, room, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
session = Session.open(path)
config = Config(provider="anthropic", model="claude-sonnet-5-5", api_key="test-key-disk-0123456789",
                base_url=base_url, retry=RetryPolicy(1, 0.001, 0.01))
loop = AgentLoop(session, make_provider(config), default_tools(), config=config, global_context_dir=work, cwd=work)

async def turns():
    async for _ in loop.run("a first turn, with room"):  # system prompt, model: already in the file
        pass
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + room, resource.RLIM_INFINITY))
    events = [e async for e in loop.run("write a note and list the folder")]
    await loop.provider.aclose()
    return events

events = asyncio.run(turns())
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
report = {
    "errors": [e.message for e in events if isinstance(e, TurnError)],
    "done": [e.stop_reason for e in events if isinstance(e, TurnDone)],
    "appended": [e.entry_id for e in events if isinstance(e, EntryAppended)],
    "ids": [e.id for e in session.index.entries],
    "leaf": session.index.leaf_id,
}
after = session.append_message({"role": "user", "content": "room again", "timestamp": 1})
report["after"] = after.id
print(json.dumps(report))
"""


def responder(request: RecordedRequest) -> Response:
    messages = (request.body or {}).get("messages", [])
    last = messages[-1]["content"] if messages else []
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return anthropic_stream(text("All written. " + "done " * 40))
    return anthropic_stream(
        text("Writing a note. " + "words " * 60),
        tool_use(f"toolu_{time.monotonic_ns()}", "write", {"path": "note.txt", "content": "n" * 300}),
        tool_use(f"toolu_{time.monotonic_ns()}b", "ls", {"path": "."}),
    )


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as s:
        s.responder = responder
        yield s


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env.update(extra)
    return env


def test_disk_full_in_the_middle_of_a_turn(
    server: FakeModelServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each run gives the file a different amount of room, so a different append fails."""
    figures: Counter[str] = Counter()
    for room in ROOM:
        work = tmp_path / f"work{room}"
        work.mkdir()
        with Session.create(tmp_path, work) as s:
            s.append_message({"role": "user", "content": "an earlier question", "timestamp": 1})
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(s.path), server.anthropic_base_url, str(room), str(work)],
            capture_output=True,
            text=True,
            timeout=60,
            env=_clean_env(),
        )
        assert result.returncode == 0, result.stderr
        out: dict[str, Any] = json.loads(result.stdout)
        figures["faults injected"] += 1
        if out["done"] == ["error"]:
            (error,) = out["errors"]
            assert "\n" not in error and "internal error" not in error, error
            assert "disk full" in error and "the entry was not saved" in error
            figures["reported in one line"] += 1
        else:
            assert out["done"] == ["stop"] and out["errors"] == []  # there was room enough
            figures["turns with room enough"] += 1
        index = SessionIndex(read_file(s.path), str(s.path))
        in_file = [e.id for e in index.entries]
        assert in_file == [*out["ids"], out["after"]], "memory and file disagree"
        assert set(out["appended"]) <= set(out["ids"])  # every entry reported as appended is in the file
        assert index.by_id[out["after"]].parent_id == out["leaf"]
        assert request_problems(index) == []
        torn = [w for w in index.warnings if "malformed" in str(w)]
        figures["torn lines (kept, reported)"] += len(torn)
        figures["lines checked"] += s.path.read_bytes().count(b"\n")
    assert figures["reported in one line"] >= 3
    report(request, "disk full", {**figures, "entries lost": 0})


def test_disk_full_in_print_mode_is_one_line(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with Session.create(tmp_path, work) as s:
        s.append_message({"role": "user", "content": "an earlier question", "timestamp": 1})
    size = s.path.stat().st_size
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "go", "--session", str(s.path)],
        cwd=work,
        env=_clean_env(
            AGENT_TUI_HOME=str(tmp_path / "home"),
            AGENT_TUI_CONFIG=str(config),
            ANTHROPIC_API_KEY="test-key-0123456789",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        ),
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: limit_file_size(size + 1500),
    )
    errors = [x for x in result.stderr.splitlines() if x.startswith("agent-tui:") and "session /" not in x]
    assert result.returncode == 1 and len(errors) == 1, result.stderr
    assert "disk full" in errors[0] and "Traceback" not in result.stderr
    assert request_problems(SessionIndex(read_file(s.path))) == []


# -- read-only places ---------------------------------------------------------------------------------


def _as_user() -> list[str]:
    """A prefix that runs a command as a user chmod restricts: none when we are not root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "running as root without setpriv: no way to test read-only places here"
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temporary folder ``nobody`` can enter (pytest's tmp_path is private to its user)."""
    root = Path(tempfile.mkdtemp(prefix="agent-tui-ro-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system: a copy
        shutil.copy2(src, dst)


def _python_for(prefix: list[str], shared_tmp: Path) -> tuple[str, dict[str, str]]:
    """The interpreter and PYTHONPATH the other user runs agent_tui with.

    The checkout's own when they can read it; when they cannot (a clone inside a private
    ``mktemp -d`` folder), the base interpreter with a copy of the package and links to the
    venv's site-packages in ``shared_tmp``, which they can read.
    """
    probe = [sys.executable, "-c", "import agent_tui.cli.main, anthropic"]
    if subprocess.run([*prefix, *probe], cwd=shared_tmp, capture_output=True, check=False).returncode == 0:
        return sys.executable, {}
    lib = shared_tmp / "lib"
    skip = shutil.ignore_patterns("__pycache__", "__editable__*")
    shutil.copytree(Path(agent_tui.__file__).parent, lib / "agent_tui", ignore=skip)
    for folder in site.getsitepackages():
        shutil.copytree(folder, lib, ignore=skip, copy_function=_link_or_copy, dirs_exist_ok=True)
    python = getattr(sys, "_base_executable", sys.executable)
    env = {**os.environ, "PYTHONPATH": str(lib)}
    probe[0] = python
    proc = subprocess.run([*prefix, *probe], cwd=shared_tmp, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"user 65534 cannot run {python} with a copy of agent_tui:\n{proc.stderr}"
    return python, {"PYTHONPATH": str(lib)}


def test_read_only_folder_and_file(server: FakeModelServer, shared_tmp: Path) -> None:
    prefix = _as_user()
    python, python_env = _python_for(prefix, shared_tmp)
    work = shared_tmp / "work"
    home = shared_tmp / "home"
    for folder in (work, home):
        folder.mkdir()
        if prefix:
            os.chown(folder, 65534, 65534)  # the user's own folders
    locked = shared_tmp / "locked"
    locked.mkdir(mode=0o755)
    if not prefix:
        locked.chmod(0o500)
    config = shared_tmp / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    config.chmod(0o644)
    env = _clean_env(
        AGENT_TUI_HOME=str(home),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        HOME=str(home),
        PYTHONDONTWRITEBYTECODE="1",
        **python_env,
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, python, "-m", "agent_tui", *args],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    # A new session in a folder the user cannot write to.
    new = run("-p", "hello", "--session-dir", str(locked / "sessions"))
    assert new.returncode == 1 and new.stderr.count("\n") == 1, new.stderr
    assert "Permission denied" in new.stderr and str(locked / "sessions") in new.stderr
    new = run("-p", "hello", "--session", str(locked / "s.jsonl"))
    assert new.returncode == 1 and new.stderr.count("\n") == 1 and "cannot create" in new.stderr, new.stderr
    assert list(locked.iterdir()) == [] and server.requests == []

    # A session file the user may read but not append to: a clear line; reading it still works.
    with Session.create(shared_tmp / "theirs", work) as s:
        s.append_message({"role": "user", "content": "hi", "timestamp": 1})
    (shared_tmp / "theirs").chmod(0o755)
    s.path.chmod(0o444 if not prefix else 0o644)
    before = s.path.read_bytes()
    appended = run("-p", "hello", "--session", str(s.path))
    assert appended.returncode == 1 and appended.stderr.count("\n") == 1, appended.stderr
    assert "cannot open for appending: Permission denied" in appended.stderr
    label = run("label", str(s.path), s.index.entries[0].id, "x")
    assert label.returncode == 1 and label.stderr.count("\n") == 1 and "Permission denied" in label.stderr
    context = run("context", str(s.path))
    assert context.returncode == 0 and json.loads(context.stdout)[0]["content"] == "hi"
    assert s.path.read_bytes() == before and server.requests == []
    assert stat.S_IMODE(locked.stat().st_mode) in (0o755, 0o500)
