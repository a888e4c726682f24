"""Sessions, configs and a scripted agent for the TUI tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.agent.compaction import Summarizer
from agent_tui.agent.events import (
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    TextDelta,
    ThinkingDelta,
    TurnDone,
    TurnError,
)
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.queue import MessageQueue
from agent_tui.agent.resources import Resources
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.store.entries import now_ms
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import AgentFactory, ModelChoice, Turns
from agent_tui.tui.app import AgentTuiApp, TuiConfig, create_app
from tests.support.session_builder import TS, assistant, tool_result

SIZE = (160, 45)


def sample_lines() -> list[dict[str, Any]]:
    """A small session: a tool-using fix, a fork at a3 (two continuations), a label and a hide."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s-sample", "timestamp": TS, "cwd": "/tmp/project"}
    ]

    def add(eid: str, parent: str | None, **fields: Any) -> None:
        lines.append({"id": eid, "parentId": parent, "timestamp": TS, **fields})

    def msg(eid: str, parent: str | None, message: dict[str, Any]) -> None:
        add(eid, parent, type="message", message=message)

    msg("u1", None, {"role": "user", "content": "Fix the failing test in parser.py", "timestamp": 1})
    a1 = assistant("I'll read the file.", (("c1", "read", {"path": "parser.py"}),))
    a1["content"].insert(0, {"type": "thinking", "thinking": "Let me look at the file first."})
    msg("a1", "u1", a1)
    msg("r1", "a1", tool_result("c1", "def parse(x):\n    return int(x)\n", "read"))
    edit = {
        "path": "parser.py",
        "edits": [{"oldText": "    return int(x)", "newText": "    return int(x.strip())"}],
    }
    msg("a2", "r1", assistant("The bug is the missing strip.", (("c2", "edit", edit),)))
    msg("r2", "a2", tool_result("c2", "Edited parser.py", "edit"))
    msg("a3", "r2", assistant("Fixed: `parse` now strips whitespace."))
    msg("u2", "a3", {"role": "user", "content": "Now add a test", "timestamp": 4})
    msg("a4", "u2", assistant("Added `test_parse_strips`."))
    msg("u3", "a3", {"role": "user", "content": "Actually, explain the fix instead", "timestamp": 5})
    msg("a5", "u3", assistant("The input had a trailing newline."))
    add("l1", "a5", type="label", targetId="a3", label="fixed")
    add("x1", "l1", type="context_edit", targetId="r1", replacement=None)
    return lines


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def sample_session(tmp_path: Path, name: str = "sample.jsonl") -> Path:
    return write_lines(tmp_path / "sessions" / name, sample_lines())


def linear_session(path: Path, entries: int, forks_every: int = 0) -> Path:
    """``entries`` alternating user/assistant messages in one chain (plus a side branch every
    ``forks_every`` entries), written fast without the store."""
    out = [json.dumps({"type": "session", "version": 3, "id": "s-big", "timestamp": TS, "cwd": "/tmp/big"})]
    parent: str | None = None
    n = 0
    i = 0
    while n < entries:
        eid = f"m{i:06d}"
        if i % 2 == 0:
            message: dict[str, Any] = {"role": "user", "content": f"question number {i}", "timestamp": i}
        else:
            message = assistant(f"Answer {i}: " + "lorem ipsum dolor sit amet " * 3)
        out.append(
            json.dumps(
                {"type": "message", "id": eid, "parentId": parent, "timestamp": TS, "message": message}
            )
        )
        n += 1
        if forks_every and i % forks_every == forks_every - 1 and n < entries:
            side = {"role": "user", "content": f"side question at {i}", "timestamp": i}
            out.append(
                json.dumps(
                    {"type": "message", "id": f"b{i:06d}", "parentId": eid, "timestamp": TS, "message": side}
                )
            )
            n += 1
        parent = eid
        i += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    return path


def make_config(tmp_path: Path, session_file: Path | None = None, **kwargs: Any) -> TuiConfig:
    cwd = tmp_path / "project"
    cwd.mkdir(exist_ok=True)
    options: dict[str, Any] = {
        "cwd": cwd,
        "session_dir": tmp_path / "sessions",
        "config_path": tmp_path / "config.toml",
        "session_file": session_file,
        "theme": "agent-dark",
        "search_index": tmp_path / "index.sqlite3",
        "exports_dir": tmp_path / "exports",
    }
    options.update(kwargs)
    return TuiConfig(**options)


def make_app(tmp_path: Path, session_file: Path | None = None, **kwargs: Any) -> AgentTuiApp:
    return create_app(make_config(tmp_path, session_file, **kwargs))


def reopen(path: Path) -> Session:
    return Session.open(path, write=False)


def last_entry(path: Path) -> dict[str, Any]:
    with reopen(path) as session:
        return dict(session.index.entries[-1].data)


# -- a scripted agent -----------------------------------------------------------------------


@dataclass
class ScriptedTurns:
    """Appends the user message, streams ``reply`` in ``chunks``, appends the assistant message.

    With ``hold``, it waits after the first chunk until released or aborted (an aborted
    reply is stored with stopReason "aborted", as the agent loop does).
    """

    session: Session
    reply: str = "Hello from the model."
    chunks: int = 4
    hold: bool = False
    error: str | None = None
    prompts: list[str] = field(default_factory=list)
    focuses: list[str | None] = field(default_factory=list)
    aborted: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)
    config: Any = field(default_factory=lambda: ScriptedConfig())
    model: str = "claude-sonnet-4-5"
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    # the rest of the app's Turns: no queue (Enter while it streams says so), no MCP servers or hooks
    queue: MessageQueue | None = None
    extensions: Extensions | None = None
    resources: Resources | None = None

    async def pre_compact(self, focus: str | None = None) -> tuple[str | None, list[str]]:
        return None, []  # no PreCompact hooks

    def summarizer(self) -> Summarizer:
        raise NotImplementedError("a scripted agent writes no summaries (give it a Summarizer)")

    def compaction_settings(self) -> CompactionSettings:
        return CompactionSettings()

    def abort(self) -> None:
        self.aborted = True
        self.release.set()

    async def run(self, prompt: Any) -> AsyncIterator[Any]:  # text, content blocks, None (queued)
        self.prompts.append(prompt)
        user = self.session.append_message({"role": "user", "content": prompt, "timestamp": now_ms()})
        yield EntryAppended(user.id, "message")
        yield ThinkingDelta("thinking about it")
        size = max(1, len(self.reply) // self.chunks)
        sent = ""
        for start in range(0, len(self.reply), size):
            piece = self.reply[start : start + size]
            sent += piece
            yield TextDelta(piece)
            if self.hold and not self.release.is_set():
                self.holding.set()
                await self.release.wait()
            if self.aborted:
                break
            await asyncio.sleep(0)
        if self.error:
            yield TurnError(self.error)
        message = assistant(sent)
        message["stopReason"] = "aborted" if self.aborted else "stop"
        entry = self.session.append_message(message)
        yield EntryAppended(entry.id, "message")
        yield TurnDone(message["stopReason"])

    async def compact(self, focus: str | None) -> AsyncIterator[Any]:
        """Folds everything but the last two entries of the branch into a fixed summary."""
        self.focuses.append(focus)
        yield CompactionStarted("manual", 120)
        path = self.session.index.active_path()
        entry = self.session.append(
            {
                "type": "compaction",
                "summary": f"Summary of the work so far (focus: {focus}).",
                "firstKeptEntryId": path[-2].id,
                "tokensBefore": 120,
            }
        )
        yield EntryAppended(entry.id, "compaction")
        yield CompactionFinished(entry.id, 120, 30, 120)
        yield TurnDone("stop")

    async def branch_with_summary(self, target_id: str, focus: str | None = None) -> AsyncIterator[Any]:
        """Moves to ``target_id`` leaving a fixed branch summary there (``focus`` appended to it)."""
        summary = "The abandoned branch explained the fix." + (f" Kept: {focus}" if focus else "")
        entry = self.session.append(
            {
                "type": "branch_summary",
                "fromId": self.session.index.leaf_id,
                "summary": summary,
            },
            parent_id=target_id,
        )
        yield EntryAppended(entry.id, "branch_summary")
        yield CompactionFinished(entry.id, 0, 50)
        yield TurnDone("stop")


class ScriptedConfig:
    """What the app reads of an agent's config: its compaction settings."""

    def compaction_settings(self, model: str | None = None) -> Any:
        from agent_tui.projection.compaction import CompactionSettings

        return CompactionSettings(keep_recent_tokens=10)


class ScriptedFactory:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.turns: list[ScriptedTurns] = []

    def __call__(self, session: Session, choice: ModelChoice) -> ScriptedTurns:
        turns = ScriptedTurns(session, **self.kwargs)
        self.turns.append(turns)
        return turns


def _typed(factory: ScriptedFactory) -> AgentFactory:
    return factory  # mypy: the scripted agent has all of the app's Turns


def _turns(t: ScriptedTurns) -> Turns:
    return t
