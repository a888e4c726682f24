"""The headless session commands: each opens a file, does one thing, exits 0 or prints one line and exits 1."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from agent_tui.projection.context import ProjectedMessage, Projection, project
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.sidecar import copies_unread, read_indexed, write_messages
from agent_tui.terminal_text import visible, visible_line

if TYPE_CHECKING:
    from agent_tui.store.record import Entry
    from agent_tui.store.session import Session

MAX_WARNINGS_SHOWN = 5
_encode = msgspec.json.Encoder().encode


def run(args: argparse.Namespace) -> int:
    # A short-lived process that builds tens of thousands of small objects and frees
    # them at exit: the cyclic GC would only rescan them (about 10% of a 50 MB load).
    gc.disable()
    try:
        handler = _HANDLERS[args.command]
        return handler(args)
    except StoreError as e:
        print(visible(f"agent-tui: {e}"), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


def _load(path: str) -> SessionIndex:
    index = SessionIndex(read_indexed(Path(path)), path)
    _report_warnings(path, [str(w) for w in index.warnings])
    return index


def _report_warnings(path: str, warnings: list[str]) -> None:
    for w in warnings[:MAX_WARNINGS_SHOWN]:
        print(visible_line(f"agent-tui: warning: {path}: {w}"), file=sys.stderr)
    if len(warnings) > MAX_WARNINGS_SHOWN:
        print(
            f"agent-tui: warning: {path}: {len(warnings) - MAX_WARNINGS_SHOWN} more warnings", file=sys.stderr
        )


def _open_for_append(path: str) -> Session:
    from agent_tui.store.session import Session  # the write path: validation and redaction load here

    session = Session.open(path, write=True)
    _report_warnings(path, [str(w) for w in session.index.warnings])
    return session


def _require_leaf(index: SessionIndex, leaf: str | None) -> str | None:
    if leaf is not None:
        index.get(leaf)
    return leaf


# -- context -----------------------------------------------------------------------------


def cmd_context(args: argparse.Namespace) -> int:
    index = _load(args.file)
    projection = project(index, _require_leaf(index, args.leaf))
    out = sys.stdout.buffer
    if args.format == "json":
        write_messages_json(projection, out)
        out.flush()
        return 0
    from agent_tui.config import resolve

    if args.format == "text":
        from agent_tui.cli.context_text import render_context

        resolved = resolve(projection.model, model=args.model)
        out.write(render_context(projection, args.file, resolved).encode())
    else:
        from agent_tui.projection.request import prepare
        from agent_tui.projection.wire import request_body

        # The model, its max_tokens and thinking level as a run with this provider would send them.
        resolved = resolve(projection.model, provider=args.format, model=args.model)
        model = resolved.model or _default_model(args.format)
        level = resolved.thinking or projection.thinking_level
        base_url = getattr(args, "base_url", None)
        api = getattr(args, "api", None) or (None if base_url else _session_api(projection, args.format))
        body = request_body(
            args.format, prepare(projection.messages), model, thinking_level=level, base_url=base_url, api=api
        )
        from agent_tui.projection.tokens import context_tokens
        from agent_tui.projection.window import fit_output, learned_window

        window = learned_window(projection.path, args.format, model)  # the server's, from an overflow
        if window is not None:
            body = fit_output(body, window, context_tokens(projection).tokens)
        out.write(msgspec.json.format(_encode(body), indent=2) + b"\n")
    out.flush()
    return 0


def _session_api(projection: Projection, provider: str) -> str:
    """The ``--api`` name of the API the session last called ``provider`` through (its latest
    assistant message of that provider says), else the provider's first API: without ``--api`` or
    ``--base-url``, the body is the one the session's own calls have been using."""
    from agent_tui.projection.registry import spec

    routes = spec(provider).routes
    for message in reversed(projection.messages):
        if message.role == "assistant" and message.message.get("provider") == provider:
            used = message.message.get("api")
            for name, route in routes.items():
                if route.api == used:
                    return name
            break
    return next(iter(routes))


def _default_model(provider: str) -> str:
    from agent_tui.projection.registry import spec

    return spec(provider).default_model


def write_messages_json(projection: Projection, out: BinaryIO) -> None:
    """The projected messages as a JSON array; unchanged messages are copied from the file undecoded
    (unless the copy would not be valid UTF-8: a damaged message is decoded, repaired and re-encoded).
    Messages whose sidecar record says they are valid UTF-8 are copied straight from the file to
    ``out`` (:func:`write_messages`: neighbours in one read, not decoded again to check)."""
    items: list[Entry | bytes | msgspec.Raw] = []
    add = items.append
    for m in projection.messages:
        entry = m._entry
        if entry is not None and m._message is None and copies_unread(entry):
            add(entry)
        else:
            add(_message_json(m))
    out.write(b"[")
    write_messages(items, out.write)
    out.write(b"]\n")


def _message_json(message: ProjectedMessage) -> bytes | msgspec.Raw:
    raw = message.raw
    if raw is not None and message._message is None:
        try:
            str(raw, "utf-8")  # loading does not check UTF-8 inside a message it did not decode
            return raw
        except UnicodeDecodeError:
            pass
    return _encode(message.message)


# -- tree --------------------------------------------------------------------------------


def cmd_tree(args: argparse.Namespace) -> int:
    from agent_tui.projection.describe import first_line, kind, shown

    index = _load(args.file)
    for note in index.tree_warnings():
        print(visible_line(f"agent-tui: warning: {args.file}: {note}"), file=sys.stderr)
    active = {e.id for e in index.active_path()}
    out = sys.stdout
    if args.json:
        nodes = [
            {
                "id": e.id,
                "parentId": e.parent_id,
                "type": e.type,
                "role": e.role,
                "text": first_line(e, 200),
                "label": _shown_or_none(index.labels.get(e.id)),
                "active": e.id in active,
                "leaf": e.id == index.leaf_id,
                "line": e.line,
            }
            for root in index.roots()
            for e in index.walk(root)
        ]
        from agent_tui.projection.subagent_links import subagent_rows

        tree: dict[str, Any] = {"leafId": index.leaf_id, "name": _shown_or_none(index.name), "nodes": nodes}
        subagents = subagent_rows(index.entries, Path(args.file))
        if subagents:  # each task call's subagent (docs/FORMAT.md, Subagents)
            tree["subagents"] = subagents
        out.write(
            msgspec.json.format(
                _encode(tree),
                indent=2,
            ).decode()
            + "\n"
        )
        return 0
    if index.name:
        out.write(f"# {visible_line(shown(index.name))}\n")
    authors = _surgery_authors(index)
    children = index.children
    # Iterative pre-order; indentation grows only at forks, so a 20,000-entry linear run stays flat.
    # Each stack item: the entry, the prefix of its own line, the prefix of the lines below it.
    stack: list[tuple[Any, str, str]] = [(r, "", "") for r in reversed(index.roots())]
    lines: list[str] = []
    seen: set[str] = set()  # a parentId cycle lists an entry below itself: show it once
    while stack:
        entry, head, body = stack.pop()
        if entry.id in seen:
            continue
        seen.add(entry.id)
        marker = "*" if entry.id in active else " "
        leaf = "  <- leaf" if entry.id == index.leaf_id else ""
        label = f" [{shown(index.labels[entry.id])}]" if entry.id in index.labels else ""
        pin = " (pinned)" if index.is_pinned(entry.id) else ""
        by = f" (by {authors[entry.id]})" if entry.id in authors else ""
        lines.append(
            head
            + visible_line(f"{marker} {entry.id} {kind(entry)}{label}{pin}{by}: {first_line(entry)}{leaf}")
        )
        kids = [k for k in children.get(entry.id, []) if k.id not in seen]
        if len(kids) == 1:
            stack.append((kids[0], body, body))
        else:
            for i in range(len(kids) - 1, -1, -1):
                last = i == len(kids) - 1
                stack.append((kids[i], body + ("└─" if last else "├─"), body + ("  " if last else "│ ")))
        if len(lines) > 2000:
            out.write("\n".join(lines) + "\n")
            lines.clear()
    out.write("\n".join(lines) + ("\n" if lines else ""))
    return 0


def _shown_or_none(text: str | None) -> str | None:
    from agent_tui.projection.describe import shown

    return None if text is None else shown(text)


def _surgery_authors(index: SessionIndex) -> dict[str, str]:
    """context_edit id -> who made it (the user, prune, the model, the overflow recovery)."""
    if not any(e.type == "context_edit" for e in index.entries):
        return {}
    from agent_tui.projection.surgery import surgery_authors

    return surgery_authors(index.entries)


# -- actions that append one entry ------------------------------------------------------------


def cmd_edit(args: argparse.Namespace) -> int:
    from agent_tui.cli import surgery_commands
    from agent_tui.projection.surgery import SurgeryError
    from agent_tui.store.session import Session

    with Session.open(args.file, write=not args.preview) as session:
        _report_warnings(args.file, [str(w) for w in session.index.warnings])
        target = session.index.by_id.get(args.id)
        if (
            args.undo
            or args.preview
            or surgery_commands.is_span(args.id)
            or (args.replace is not None and target is not None and target.type == "compaction")
        ):
            try:
                return surgery_commands.run_edit(session, args)
            except SurgeryError as e:
                print(visible(f"agent-tui: {args.file}: {e}"), file=sys.stderr)
                return 1
        if args.hide:
            entry = session.hide(args.id)
        elif args.restore:
            entry = session.restore(args.id)
        else:
            entry = session.replace(args.id, args.replace)
    print(entry.id)
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from agent_tui.cli.surgery_commands import run_prune
    from agent_tui.projection.surgery import SurgeryError

    try:
        return run_prune(args)
    except SurgeryError as e:
        print(visible(f"agent-tui: {args.file}: {e}"), file=sys.stderr)
        return 1


def cmd_label(args: argparse.Namespace) -> int:
    with _open_for_append(args.file) as session:
        entry = session.label(args.id, args.name)
    print(entry.id)
    return 0


def cmd_rename(args: argparse.Namespace) -> int:
    with _open_for_append(args.file) as session:
        entry = session.rename(args.name)
    print(entry.id)
    return 0


def cmd_branch(args: argparse.Namespace) -> int:
    with _open_for_append(args.file) as session:
        entry = session.branch(args.id)
    print(entry.id if entry is not None else args.id)
    return 0


def cmd_pin(args: argparse.Namespace) -> int:
    with _open_for_append(args.file) as session:
        entry = session.pin(args.id, not args.unpin)
    print(entry.id)
    return 0


def cmd_fork(args: argparse.Namespace) -> int:
    from agent_tui.store.clock import now_iso
    from agent_tui.store.paths import session_file_name
    from agent_tui.store.session import Session

    session = Session.open(args.file, write=False)
    _report_warnings(args.file, [str(w) for w in session.index.warnings])
    if args.output:
        out = Path(args.output)
    else:
        import uuid

        out = Path(args.file).resolve().parent / session_file_name(str(uuid.uuid4()), now_iso())
    path = session.fork(args.id, out)
    print(path)
    return 0


_HANDLERS = {
    "context": cmd_context,
    "tree": cmd_tree,
    "edit": cmd_edit,
    "label": cmd_label,
    "rename": cmd_rename,
    "branch": cmd_branch,
    "pin": cmd_pin,
    "fork": cmd_fork,
    "prune": cmd_prune,
}
