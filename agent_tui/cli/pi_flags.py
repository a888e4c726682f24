"""pi 1.6's session and tool flags, as pi's ``--help`` words them: ``--session PATH|ID``, ``--fork
PATH|ID``, ``--no-session``, ``-n/--name``, ``-t/--tools``, ``-xt/--exclude-tools``,
``-nt/--no-tools`` and ``-nbt/--no-builtin-tools``. :func:`settle` turns them into what every face
reads: ``args.session`` (a path), ``args.no_session``, ``args.session_name`` and
``args.tool_selection`` (:class:`agent_tui.agent.tool_selection.ToolSelection`, which the faces'
resources carry to the agent loop)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agent_tui.agent.tool_selection import ToolSelection, ToolSelectionError
from agent_tui.store.errors import StoreError
from agent_tui.store.lookup import find_session
from agent_tui.store.session import Session


def add_session_arguments(parser: argparse.ArgumentParser, start: argparse._MutuallyExclusiveGroup) -> None:
    """``--session`` and ``--fork`` go in ``start`` (with ``-c`` and ``-r``: one way to start)."""
    start.add_argument(
        "--session",
        metavar="PATH|ID",
        help="Open a session by file path or full/partial ID (with -p: a path is created if missing)",
    )
    start.add_argument(
        "--fork",
        metavar="PATH|ID",
        help="Fork a session by file path or full/partial ID into the current directory",
    )
    parser.add_argument("--no-session", action="store_true", help="Don't save session (ephemeral)")
    parser.add_argument("-n", "--name", metavar="NAME", help="Set session display name")


def add_tool_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-t",
        "--tools",
        metavar="TOOLS",
        help="Comma-separated allowlist of tool names or patterns (*) to enable; keeps MCP tools unless "
        "an entry starts with mcp__; only +name/-name entries add to or remove from the defaults",
    )
    parser.add_argument(
        "-xt",
        "--exclude-tools",
        metavar="TOOLS",
        help="Comma-separated denylist of tool names or patterns (*) to disable; applies to all tools, "
        "MCP tools included",
    )
    parser.add_argument(
        "-nt", "--no-tools", action="store_true", help="Disable all tools by default (built-in and extension)"
    )
    parser.add_argument(
        "-nbt",
        "--no-builtin-tools",
        action="store_true",
        help="Disable built-in tools by default but keep extension/custom tools enabled",
    )


def settle(args: argparse.Namespace, cwd: str | None = None) -> str | None:
    """Check and resolve the flags (a ``--fork`` writes its new file here); one line naming what is
    wrong, or None."""
    here = cwd if cwd is not None else os.getcwd()
    problem = _split_positionals(args)
    if problem is not None:
        return problem
    session_dir = getattr(args, "session_dir", None)
    try:
        args.tool_selection = ToolSelection.parse(
            getattr(args, "tools", None),
            getattr(args, "exclude_tools", None),
            no_tools=bool(getattr(args, "no_tools", False)),
            no_builtin=bool(getattr(args, "no_builtin_tools", False)),
        )
    except ToolSelectionError as e:
        return f"agent-tui: {e}"
    name = getattr(args, "name", None)
    if name is not None and not name.split():
        return "agent-tui: --name: an empty name"
    args.session_name = " ".join(name.split()) if name else None
    fork = getattr(args, "fork", None)
    if getattr(args, "no_session", False):
        given = [
            flag
            for flag, value in (
                ("--fork", fork),
                ("--session", getattr(args, "session", None)),
                ("a session file", getattr(args, "file", None)),
                ("--continue", getattr(args, "continue_last", False)),
                ("--resume", getattr(args, "resume", False)),
                ("--leaf", getattr(args, "leaf", None)),
            )
            if value
        ]
        if given:
            return f"agent-tui: --no-session cannot be combined with {', '.join(given)}"
    session = getattr(args, "session", None)
    try:
        if session:
            found = find_session(session, here, session_dir)
            if found.elsewhere is not None:
                return (
                    f"agent-tui: --session {session}: that session belongs to {found.elsewhere}; "
                    f"--fork {session} continues a copy of it here"
                )
            args.session = str(found.path)
        if fork:
            if getattr(args, "file", None):
                return "agent-tui: --fork cannot be combined with a session file"
            found = find_session(fork, here, session_dir, flag="--fork")
            if not found.path.is_file():
                return f"agent-tui: --fork {fork}: no such session file"
            from agent_tui.library.actions import fork_into

            args.session = str(fork_into(found.path, here, session_dir))
            args.forked_from = str(found.path)
    except (StoreError, OSError) as e:
        return f"agent-tui: {e}"
    return None


def _split_positionals(args: argparse.Namespace) -> str | None:
    """``FILE | @FILE ...``: ``args.file`` (one session file, or None) and ``args.file_args`` (pi's
    ``@path`` attachments, for ``-p``). ``-p @a.py "question"``: the prompt is the message; so is
    ``-p --model M "question"`` (pi's ``-p`` is a flag, its message a positional argument)."""
    given = getattr(args, "file", None)
    items = [given] if isinstance(given, str) else list(given or [])
    prompt = getattr(args, "prompt", None)
    attach = [item[1:] for item in items if item.startswith("@") and len(item) > 1]
    rest = [item for item in items if not (item.startswith("@") and len(item) > 1)]
    if (
        prompt is not None
        and prompt.startswith("@")
        and len(prompt) > 1
        and Path(prompt[1:]).expanduser().exists()
    ):
        attach.insert(0, prompt[1:])  # -p @file.py "question": argparse gave -p the @file
        messages = [item for item in rest if not item.endswith(".jsonl")]
        prompt = messages[0] if messages else ""
        rest = [item for item in rest if item is not (messages[0] if messages else None)]
        args.prompt = prompt
    elif prompt == "":  # pi's bare -p (a flag there): the message is the first word that is no file
        messages = [i for i in rest if not i.endswith(".jsonl") and not Path(i).expanduser().is_file()]
        if messages:
            args.prompt = prompt = messages[0]
            rest = [item for item in rest if item is not messages[0]]
    args.file_args = attach
    if attach and prompt is None:
        mode = getattr(args, "mode", "text")
        if mode == "rpc":
            return "agent-tui: --mode rpc takes no @file arguments (send them in the prompt command)"
        return "agent-tui: @file arguments go with -p (in the app, type @path in the composer)"
    if len(rest) > 1:
        return f"agent-tui: one session file at most ({', '.join(rest)}); -p takes one prompt"
    args.file = rest[0] if rest else None
    return None


def apply_name(store: Session, args: argparse.Namespace) -> None:
    """``-n/--name``: a ``session_info`` entry naming the session (none when it has that name)."""
    name = getattr(args, "session_name", None)
    if name and store.index.name != name and not store.read_only:
        store.rename(name)


def forked_note(args: argparse.Namespace) -> str | None:
    """The line a face shows after ``--fork`` made its copy."""
    source = getattr(args, "forked_from", None)
    return f"forked {source} into {Path(args.session)}" if source else None


__all__ = [
    "add_session_arguments",
    "add_tool_arguments",
    "apply_name",
    "forked_note",
    "settle",
]
