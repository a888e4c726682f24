"""pi's RPC commands on the session tree and its files: ``get_tree`` (pi's nested nodes),
``fork`` (before a user message, as pi does), ``clone``, ``get_fork_messages``, ``new_session``,
``export_html``, ``switch_session`` and ``set_session_name``, and agent-tui's ``branch`` (move
the leaf) and ``edit`` (hide, replace or restore an entry in the model's view).

A fork or a clone writes a new session file beside the current one (its header naming it as
``parentSession``) and continues in it: the old file is closed first, so there is never a second
writer. agent-tui adds to pi's fields: ``fork`` takes ``position: "at"`` (the path up to and
including the entry, as ``agent-tui fork``), ``output`` (where to write it) and ``switch: false``
(write it, stay here), and every fork and clone answers with the new ``sessionFile``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_tui.cli.rpc_host import RpcHost
from agent_tui.cli.rpc_registry import LATER, CommandError, Handler, bool_field, text_field
from agent_tui.store.record import JSONObject


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8").decode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: \u escapes, which any JSON reader takes
        return json.dumps(value, separators=(",", ":"))


def encode_tree(roots: list[JSONObject]) -> bytes:
    """pi's nested tree as compact JSON, without recursion (:func:`json.dumps` stops at about
    1,000 levels, and a session's branch can be 20,000 entries deep)."""

    def parts() -> Iterator[str]:
        yield "["
        stack: list[Iterator[JSONObject]] = [iter(roots)]
        first = [True]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                first.pop()
                yield "]}" if stack else "]"
                continue
            if not first[-1]:
                yield ","
            first[-1] = False
            head = {k: v for k, v in node.items() if k != "children"}
            yield _dumps(head)[:-1] + ',"children":['
            stack.append(iter(node["children"]))
            first.append(True)

    return "".join(parts()).encode("utf-8")


async def _get_tree(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    if bool_field(cmd, "flat", False):  # agent-tui's flat list, as `agent-tui tree FILE --json`
        return server.session.tree()
    tree = encode_tree(server.session.pi_tree())
    leaf = _dumps(server.session.leaf_id).encode()
    server.respond_encoded(cmd, "get_tree", b'{"tree":' + tree + b',"leafId":' + leaf + b"}")
    return LATER


def user_text(content: Any) -> str:
    """A user message's text, as pi's fork selector reads it (text blocks joined, images left out)."""
    if isinstance(content, str):
        return content
    return "".join(
        str(b.get("text", ""))
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


async def _fork(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    position = cmd.get("position", "before")
    if position not in ("before", "at"):
        raise CommandError('fork: \'position\' must be "before" (a user message) or "at" (any entry)')
    entry_id = text_field(cmd, "entryId", required=position == "before")
    output = text_field(cmd, "output", required=False)
    switch = bool_field(cmd, "switch", True)
    server.idle("fork")
    data: JSONObject = {}
    if position == "before":
        assert entry_id is not None
        entry = server.session.entry(entry_id)
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "user":
            raise CommandError(
                f'fork: {entry_id} is not a user message (fork before one, or at any entry with "position": "at")'
            )
        data["text"] = user_text(message.get("content"))
    path = server.session.fork(entry_id, output, before=position == "before")
    if switch:
        await server.switch(path)
    data.update({"cancelled": False, "sessionFile": str(path), "switched": switch})
    return data


async def _clone(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    leaf = server.session.leaf_id
    if leaf is None:
        raise CommandError("Cannot clone session: no current entry selected")
    server.idle("clone")
    path = server.session.fork(leaf)
    await server.switch(path)
    return {"cancelled": False, "sessionFile": str(path)}


async def _get_fork_messages(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    messages = []
    for entry in server.session.entries():
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
            text = user_text(message.get("content"))
            if text:
                messages.append({"entryId": entry["id"], "text": text})
    return {"messages": messages}


async def _new_session(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    parent = text_field(cmd, "parentSession", required=False)
    server.idle("new_session")
    await server.switch(parent_session=parent)
    return {"cancelled": False, "sessionFile": str(server.session.path)}


async def _export_html(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """The whole tree as one HTML page (``agent-tui export``'s), read from the file in a thread while
    other commands are answered; never over an existing file."""
    from agent_tui.library.export import default_export_path, export_session
    from agent_tui.store.index import SessionIndex
    from agent_tui.store.reader import read_file

    output = text_field(cmd, "outputPath", required=False)
    source = server.session.path
    if not server.session.entries():
        raise CommandError("export_html: nothing to export yet: start a conversation first")
    cwd = Path(server.agent.loop.cwd)
    if output is not None:
        target = Path(output).expanduser()
        target = target if target.is_absolute() else cwd / target
    else:  # pi's name: <app>-session-<file name>.html in the working folder, numbered past one there
        target = default_export_path(Path(f"agent-tui-session-{source.stem}.jsonl"), "html", cwd)

    def export() -> Path:
        return export_session(SessionIndex(read_file(source), str(source)), "html", source=source, out=target)

    async def run() -> None:
        try:
            path = await asyncio.to_thread(export)
        except Exception as e:  # the file cannot be written (it exists, the folder is missing...)
            server.fail(cmd, "export_html", f"export_html: {e}")
            return
        server.respond(cmd, "export_html", {"path": str(path)})

    server.later(run())
    return LATER


async def _branch(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    entry_id = text_field(cmd, "entryId")
    assert entry_id is not None
    server.idle("branch")
    marker = server.session.branch(entry_id)
    return {"markerId": marker, "leafId": server.session.leaf_id}


async def _switch_session(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    target = text_field(cmd, "sessionPath")
    assert target is not None
    server.idle("switch_session")
    path = Path(target).expanduser()
    if not path.is_file():
        raise CommandError(f"switch_session: no session file {target!r}")
    await server.switch(path)
    return {"cancelled": False}


async def _edit(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    entry_id = text_field(cmd, "entryId")
    action = text_field(cmd, "action")
    assert entry_id is not None
    server.idle("edit")
    if action == "hide":
        edit_id = server.session.hide(entry_id)
    elif action == "restore":
        edit_id = server.session.restore(entry_id)
    elif action == "replace":
        content = cmd.get("content")
        if not isinstance(content, str | list):
            raise CommandError("edit: 'replace' needs 'content' (text, or a list of content blocks)")
        edit_id = server.session.replace(entry_id, content)
    else:
        raise CommandError('edit: \'action\' must be "hide", "replace" or "restore"')
    return {"editId": edit_id, "leafId": server.session.leaf_id}


async def _set_session_name(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    name = text_field(cmd, "name")
    assert name is not None
    if not name.strip():
        raise CommandError("Session name cannot be empty")  # pi's words
    server.idle("set_session_name")
    server.session.rename(name)
    server.lines.write({"type": "session_info_changed", "name": server.session.name})
    return None


#: This module's commands, pi's name -> handler (:mod:`agent_tui.cli.rpc_commands` joins the tables).
COMMANDS: dict[str, Handler] = {
    "get_tree": _get_tree,
    "fork": _fork,
    "clone": _clone,
    "get_fork_messages": _get_fork_messages,
    "new_session": _new_session,
    "export_html": _export_html,
    "branch": _branch,
    "switch_session": _switch_session,
    "edit": _edit,
    "set_session_name": _set_session_name,
}


__all__ = ["COMMANDS", "encode_tree", "user_text"]
