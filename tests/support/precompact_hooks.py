"""A real PreCompact hook script for tests, and an app's agent that runs the hooks it is given."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_tui.agent.build import make_provider
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.trust import TrustStore
from agent_tui.store.session import Session
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer
from tests.support.session_builder import Builder, assistant, user

REASON = "a release is being cut"
TURNS = (
    # the first answer long enough that a summary of it is shorter (a growing one is not applied)
    ("fix the parser", "the bug is the missing strip" + "; the parser reads each line" * 30),
    ("now add a test", "added test_parse_strips"),
    ("run the tests", "all green"),
)


def parser_session(path: Path, turns: int = 2) -> Path:
    """A session of ``turns`` user/assistant exchanges about a parser fix, written to ``path``."""
    b = Builder()
    for question, answer in TURNS[:turns]:
        b.message(user(question))
        b.message(assistant(answer))
    return b.write(path)


def precompact_hook(folder: Path, *, block: str | None) -> tuple[str, Path]:
    """A PreCompact hook that logs each event it gets to the returned file; ``block``: "exit2" (the
    reason on stderr), "json" (``decision: "block"``) or None (it lets the compaction through).
    Returns its command line and its log."""
    log = folder / "precompact.jsonl"
    script = folder / "precompact.py"
    reply = {
        "exit2": f"print({REASON!r}, file=sys.stderr); sys.exit(2)\n",
        "json": f"print(json.dumps({{'decision': 'block', 'reason': {REASON!r}}}))\n",
        None: "",
    }[block]
    script.write_text(
        "import json, sys\nevent = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(json.dumps(event) + '\\n')\n" + reply
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", log


def hooked_agent(
    server: FakeModelServer, tmp_path: Path, hooks: dict[str, Any]
) -> Callable[[Session, object], AgentLoop]:
    """An app's agent factory whose extensions hold ``hooks`` (Claude Code's shape), the folder
    ``tmp_path/work`` and a home and trust store of its own."""
    config = make_config(server)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def factory(session: Session, choice: object) -> AgentLoop:
        ext = Extensions(
            str(work),
            {"hooks": hooks},
            home=tmp_path / "home",
            trust_store=TrustStore(tmp_path / "trust.json"),
        )
        return AgentLoop(session, make_provider(config), [], config=config, cwd=str(work), extensions=ext)

    return factory


def blocking_agent(
    server: FakeModelServer, tmp_path: Path
) -> tuple[Callable[[Session, object], AgentLoop], Path]:
    """An agent factory whose manual compactions a PreCompact hook blocks (exit 2, :data:`REASON`),
    and the hook's log."""
    command, log = precompact_hook(tmp_path, block="exit2")
    hooks = {"PreCompact": [{"matcher": "manual", "hooks": [{"command": command}]}]}
    return hooked_agent(server, tmp_path, hooks), log
