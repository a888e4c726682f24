"""``agent-tui -p PROMPT``: one turn without the app.

The reply streams to stdout; tool activity, retries and the session path go to
stderr as short lines. Tools run without asking (permission modes come with the
safety issue). Exit codes: 0 done, 1 error (one clear line on stderr), 130
aborted (Ctrl+C).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

from agent_tui.agent.events import (
    Retrying,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from agent_tui.agent.loop import AgentLoop, build_agent
from agent_tui.config import ConfigError, load_config
from agent_tui.store.errors import StoreError
from agent_tui.store.listing import list_sessions
from agent_tui.store.paths import session_dir_for
from agent_tui.store.session import Session

EXIT_ERROR = 1
EXIT_ABORTED = 130


def _fail(message: str) -> int:
    text = message if message.startswith("agent-tui") else f"agent-tui: {message}"
    print(text, file=sys.stderr)
    return EXIT_ERROR


def open_session(args: argparse.Namespace, cwd: str) -> tuple[Session, str | None]:
    """The session to write to, and a note for stderr (e.g. nothing to continue)."""
    target = getattr(args, "session", None) or getattr(args, "file", None)
    if target:
        path = Path(target).expanduser()
        if path.exists():
            return Session.open(path), None
        return Session.create(path.parent, cwd, path=path), None
    session_dir = getattr(args, "session_dir", None)
    if getattr(args, "continue_last", False):
        sessions = list_sessions(cwd, session_dir=session_dir)
        if sessions:
            return Session.open(sessions[0].path), None
        note = "no earlier session in this directory: starting a new one"
        return Session.create(session_dir_for(cwd, session_dir), cwd), note
    return Session.create(session_dir_for(cwd, session_dir), cwd), None


def _describe_call(name: str, arguments: dict[str, object]) -> str:
    key = {"bash": "command", "read": "path", "write": "path", "edit": "path", "ls": "path"}.get(name)
    if key is None and name in ("grep", "find"):
        key = "pattern"
    detail = str(arguments.get(key, "")) if key else ""
    detail = " ".join(detail.split())
    if len(detail) > 120:
        detail = detail[:117] + "..."
    return f"{name} {detail}".rstrip()


async def stream_turn(loop: AgentLoop, prompt: str, out: TextIO, err: TextIO) -> int:
    """Run one turn, writing the reply to ``out`` and activity to ``err``; return the exit code."""
    wrote_text = False
    ends_with_newline = True
    code = 0
    error: str | None = None
    calls: dict[str, str] = {}
    async for event in loop.run(prompt):
        if isinstance(event, TextDelta):
            out.write(event.text)
            out.flush()
            wrote_text = True
            ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, ToolStarted):
            if wrote_text and not ends_with_newline:
                out.write("\n")
                out.flush()
                ends_with_newline = True
            calls[event.call_id] = _describe_call(event.name, event.arguments)
            print(f"> {calls[event.call_id]}", file=err, flush=True)
        elif isinstance(event, ToolFinished):
            if event.is_error:
                print(f"  {event.name} failed", file=err, flush=True)
        elif isinstance(event, Retrying):
            print(
                f"retrying in {event.delay:.1f}s (attempt {event.attempt}): {event.reason}",
                file=err,
                flush=True,
            )
        elif isinstance(event, TurnError):
            error = event.message
        elif isinstance(event, TurnDone):
            if event.stop_reason == "aborted":
                code = EXIT_ABORTED
            elif event.stop_reason == "error":
                code = EXIT_ERROR
    if wrote_text and not ends_with_newline:
        out.write("\n")
        out.flush()
    if code == EXIT_ABORTED:
        print("agent-tui: aborted", file=err, flush=True)
    elif error is not None:
        print(f"agent-tui: {error}", file=err, flush=True)
        code = EXIT_ERROR
    return code


async def _main(loop: AgentLoop, prompt: str) -> int:
    event_loop = asyncio.get_running_loop()
    interrupts = 0

    def interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:  # a second Ctrl+C does not wait for the abort: every entry is already on disk
            os._exit(EXIT_ABORTED)
        loop.abort()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        event_loop.add_signal_handler(signal.SIGINT, interrupt)
        event_loop.add_signal_handler(signal.SIGTERM, interrupt)
    try:
        return await stream_turn(loop, prompt, sys.stdout, sys.stderr)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            event_loop.remove_signal_handler(signal.SIGINT)
            event_loop.remove_signal_handler(signal.SIGTERM)
        await loop.provider.aclose()


def run_print(args: argparse.Namespace) -> int:
    prompt = str(args.prompt)
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        return _fail("empty prompt")
    if getattr(args, "resume", False):
        return _fail("--resume needs the app; use --session FILE or -c with -p")
    try:
        config = load_config(
            provider=args.provider,
            model=args.model,
            base_url=args.base_url,
            thinking=getattr(args, "thinking", None),
        )
    except ConfigError as e:
        return _fail(str(e))
    cwd = os.getcwd()
    try:
        session, note = open_session(args, cwd)
    except StoreError as e:
        return _fail(str(e))
    try:
        if note:
            print(f"agent-tui: {note}", file=sys.stderr)
        if session.read_only:
            return _fail(session.read_only_reason or f"{session.path}: read-only")
        if getattr(args, "leaf", None):
            session.branch(args.leaf)
        loop = build_agent(session, config)
        code = asyncio.run(_main(loop, prompt))
        print(f"agent-tui: session {session.path}", file=sys.stderr)
        return code
    except StoreError as e:
        return _fail(str(e))
    finally:
        session.close()


__all__ = ["open_session", "run_print", "stream_turn"]
