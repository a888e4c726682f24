"""``agent-tui --mode rpc [--session FILE | -c]``: drive a live session with JSON lines (pi 1.6's RPC).

Commands arrive on stdin, one JSON object per line (split on LF only; a CR before it is dropped).
Responses (``{"type": "response", "command", "success", "data" | "error", "id"}``, the command's
``id`` repeated) and the session's events (:mod:`agent_tui.sdk.pi_events`, as ``--mode json``
writes them, without the header) go to stdout, one per line; nothing else does: notes and
diagnostics go to stderr. Everything runs on one event loop through the SDK: one agent loop, one
session writer. A prompt's response comes as soon as it is accepted, its events after it, while
further commands (``steer``, ``abort``, ``get_state``...) are read and answered.

A line that is not JSON, not an object, without a known ``type`` or with a missing or wrong field
gets an error response naming the problem; the process keeps running. EOF on stdin (or SIGTERM,
SIGINT, SIGHUP) ends it cleanly: a running turn is aborted (its partial reply recorded, marked
aborted), its last records written, then the process exits 0. See docs/RPC.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Sequence
from pathlib import Path
from typing import Literal

from agent_tui.agent.events import AgentEvent
from agent_tui.agent.permissions import PermissionModeError, cwd_notice
from agent_tui.agent.prompt_files import PromptFileError
from agent_tui.agent.skills import SkillError
from agent_tui.cli import rpc_model_commands, rpc_session_commands  # noqa: F401 - they register their commands
from agent_tui.cli.json_mode import JsonLines, encode_record
from agent_tui.cli.print_mode import headless_agent, load_and_expand, load_settings, open_session
from agent_tui.cli.rpc_registry import HANDLERS, LATER, NULL, CommandError, command, text_field
from agent_tui.config import ConfigError
from agent_tui.sdk import Agent, PiEventStream, SessionHandle, create_agent
from agent_tui.sdk import open_session as sdk_open_session
from agent_tui.sdk.pi_events import RunKind
from agent_tui.store.errors import StoreError
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import StreamRedactor, redact_text
from agent_tui.terminal_text import for_terminal


def _response(cmd: JSONObject | None, name: str, success: bool) -> JSONObject:
    """A response's head: the command's ``id`` (when it has one), ``type``, ``command``, ``success``."""
    record: JSONObject = {}
    if cmd is not None and isinstance(cmd.get("id"), str | int):
        record["id"] = cmd["id"]
    record.update({"type": "response", "command": name, "success": success})
    return record


class RpcServer:
    """One RPC session: reads commands, answers them, streams the runs' events."""

    def __init__(self, agent: Agent, lines: JsonLines, scoped_models: Sequence[str] = ()) -> None:
        self.agent = agent
        agent.loop.tool_updates = True  # pi's tool_execution_update: a running bash's output so far
        self.lines = lines
        #: ``--models``: what ``cycle_model`` cycles through (``provider/id``), empty: every model with a key
        self.scoped_models = list(scoped_models)
        self.run_task: asyncio.Task[None] | None = None
        self.bash_task: asyncio.Task[None] | None = None
        self.bash_abort: asyncio.Event | None = None
        self.compacting = False
        self.pending: set[asyncio.Task[None]] = set()  # commands that answer later (abort, compact, bash)

    @property
    def session(self) -> SessionHandle:
        return self.agent.session

    @property
    def busy(self) -> bool:
        return self.run_task is not None and not self.run_task.done()

    # -- output -------------------------------------------------------------------------------

    def respond(
        self, cmd: JSONObject | None, name: str, data: JSONObject | None = None, *, null: bool = False
    ) -> None:
        """A success response, with ``data`` when given (``null``: ``"data": null``)."""
        record = _response(cmd, name, True)
        if data is not None or null:
            record["data"] = data
        self.lines.write(record)

    def respond_encoded(self, cmd: JSONObject | None, name: str, data: bytes) -> None:
        """A success response whose ``data`` is already JSON (a tree too deep for :func:`json.dumps`)."""
        head = encode_record(_response(cmd, name, True))  # ...}\n: the data goes before the closing brace
        self.lines.write_encoded(head[:-2] + b',"data":' + data + b"}\n")

    def fail(self, cmd: JSONObject | None, name: str, error: str) -> None:
        record = _response(cmd, name, False)
        record["error"] = _redact(error)
        self.lines.write(record)

    # -- input --------------------------------------------------------------------------------

    async def handle_line(self, raw: bytes) -> None:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip():
            return
        try:
            cmd = json.loads(line)
        except ValueError as e:
            self.fail(None, "parse", f"Failed to parse command: {e}")
            return
        if not isinstance(cmd, dict):
            self.fail(None, "parse", f"a command is a JSON object, not {type(cmd).__name__}")
            return
        name = cmd.get("type")
        if not isinstance(name, str):
            self.fail(cmd, "parse", "the command has no 'type' (a string naming the command)")
            return
        handler = HANDLERS.get(name)
        if handler is None:
            self.fail(cmd, name, f"Unknown command: {name}")
            return
        try:
            data = await handler(self, cmd)
        except CommandError as e:
            self.fail(cmd, name, str(e))
        except (StoreError, ConfigError, ValueError, RuntimeError) as e:
            self.fail(cmd, name, str(e))
        else:
            if data is NULL:
                self.respond(cmd, name, None, null=True)
            elif data is not LATER:
                self.respond(cmd, name, data)

    def later(self, work: Awaitable[None]) -> None:
        """Run a command whose response comes when it is done, while other commands are read."""
        task = asyncio.ensure_future(work)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    # -- runs ---------------------------------------------------------------------------------

    def start_run(self, events: AsyncIterator[AgentEvent], kind: RunKind = "prompt") -> asyncio.Task[None]:
        self.run_task = asyncio.ensure_future(self._run(events, kind))
        return self.run_task

    async def _run(self, events: AsyncIterator[AgentEvent], kind: RunKind) -> None:
        while True:
            stream = PiEventStream(self.session.store.index, self.agent.model_info, kind=kind)
            for record in stream.start():
                self.lines.write(record)
            stop = "stop"
            try:
                async for event in events:
                    for record in stream.feed(event):
                        self.lines.write(record)
                    stop = getattr(event, "stop_reason", stop)
            except Exception as e:  # the loop said so in its events (TurnError, TurnDone) first
                print(
                    _redact(f"agent-tui: internal error: {type(e).__name__}: {e}"),
                    file=for_terminal(sys.stderr),  # the message may quote a model's or a file's text
                    flush=True,
                )
                return
            # steering that came as the agent stopped: delivered now, as pi does
            if kind != "prompt" or stop in ("aborted", "error") or not len(self.agent.loop.queue):
                return
            events = self.agent.resume()

    async def stop(self) -> None:
        """Abort what runs and wait for it to finish writing (EOF, a signal, ``abort``)."""
        if self.bash_abort is not None:
            self.bash_abort.set()
        self.agent.abort()
        for task in (self.run_task, self.bash_task):
            if task is not None and not task.done():
                with contextlib.suppress(Exception):
                    await task

    def model_object(self) -> JSONObject:
        """pi's Model object for the current model."""
        return rpc_model_commands.model_object(
            self.agent.provider, self.agent.model, self.agent.api, self.agent.config.base_url
        )

    async def switch(self, path: Path | None = None, parent_session: str | None = None) -> None:
        """Continue in another session file (``path``; None: a new one beside the current one, its
        header naming ``parent_session``): the old one is closed first, so there is never a second
        writer; the agent keeps its model, thinking level, permissions, switches and queue."""
        old = self.agent
        if path is None:
            new_session = sdk_open_session(
                cwd=old.loop.cwd, session_dir=old.session.path.parent, parent_session=parent_session
            )
        else:
            new_session = sdk_open_session(path, cwd=old.loop.cwd)
        try:
            agent = create_agent(
                new_session,
                config=old.config,
                permissions=old.loop.permissions or "auto",
                tools=old.loop.tools,
                cwd=old.loop.cwd,
                resources=old.loop.resources,
                extensions=old.loop.extensions,
            )
        except BaseException:
            new_session.close()
            raise
        agent.loop.model, agent.loop.thinking = old.loop.model, old.loop.thinking
        agent.loop.queue = old.loop.queue
        agent.loop.tool_updates = old.loop.tool_updates
        agent.carry_switches(old)
        old.loop.extensions = None  # the new agent runs them now: closing the old one must not stop them
        await old.aclose()
        old.session.close()
        self.agent = agent

    def watch_queue(self) -> None:
        """pi's ``queue_update``: both queues, whole, after every change (a steer, a delivery, a clear)."""

        def changed() -> None:
            self.lines.write({"type": "queue_update", **self.agent.queued()})

        self.agent.loop.queue.on_change = changed

    def idle(self, what: str) -> None:
        if self.busy or self.agent.running:
            raise CommandError(f"{what}: the agent is running (abort it or wait for agent_settled)")
        if self.bash_task is not None and not self.bash_task.done():
            raise CommandError(f"{what}: a bash command is running (abort_bash it or wait)")


def _content(server: RpcServer, cmd: JSONObject) -> str | list[JSONObject]:
    """The message to send: ``message`` with a ``/template`` or ``/skill:name`` expanded (as the
    app and print mode expand them), and ``images`` after it."""
    message = text_field(cmd, "message")
    assert message is not None
    resources = server.agent.loop.resources
    if resources is not None:
        try:
            expanded = resources.expand(message)
        except SkillError as e:
            raise CommandError(f"{cmd['type']}: {e}") from e
        message = expanded if expanded is not None else message
    images = cmd.get("images")
    if images is None:
        return message
    if not isinstance(images, list) or not all(
        isinstance(i, dict) and isinstance(i.get("data"), str) and isinstance(i.get("mimeType"), str)
        for i in images
    ):
        raise CommandError(f"{cmd['type']}: 'images' must be a list of {{type: image, data, mimeType}}")
    blocks: list[JSONObject] = [{"type": "text", "text": message}]
    blocks += [{"type": "image", "data": i["data"], "mimeType": i["mimeType"]} for i in images]
    return blocks


# -- prompting -----------------------------------------------------------------------------------


@command("prompt")
async def _prompt(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    content = _content(server, cmd)
    text, blocks = _queued(cmd, content)
    if server.busy or server.agent.running:
        behavior = cmd.get("streamingBehavior")
        if behavior == "steer":
            server.agent.loop.queue.steer(text, blocks)
        elif behavior == "followUp":
            server.agent.loop.queue.follow_up(text, blocks)
        else:
            raise CommandError(
                'prompt: the agent is running: set \'streamingBehavior\' to "steer" or "followUp" to queue it'
            )
        return {"disposition": "queued"}
    server.idle("prompt")
    if server.session.read_only:
        raise CommandError(server.session.read_only_reason or "the session is read-only")
    server.start_run(server.agent.prompt(content))
    return {"disposition": "started"}


def _queued(cmd: JSONObject, content: str | list[JSONObject]) -> tuple[str, list[JSONObject] | None]:
    """What the queue holds for a message: its text and, with images, its content blocks."""
    if isinstance(content, str):
        return content, None
    return str(cmd["message"]), content


@command("steer")
async def _steer(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.steer(*_queued(cmd, _content(server, cmd)))
    return {"disposition": "queued"}


@command("follow_up")
async def _follow_up(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.follow_up(*_queued(cmd, _content(server, cmd)))
    return {"disposition": "queued"}


@command("abort")
async def _abort(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    async def wait() -> None:
        await server.stop()
        server.respond(cmd, "abort")

    server.later(wait())
    return LATER


@command("clear_queue")
async def _clear_queue(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    queued = server.agent.queued()
    server.agent.loop.queue.take_all()
    return queued


# -- state ---------------------------------------------------------------------------------------


@command("get_state")
async def _get_state(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    agent, session = server.agent, server.session
    data: JSONObject = {
        "model": server.model_object(),
        "thinkingLevel": agent.thinking_level,
        "isStreaming": server.busy and not server.compacting,
        "isCompacting": server.compacting,
        "steeringMode": agent.loop.queue.steering_mode,
        "followUpMode": agent.loop.queue.follow_up_mode,
        "sessionFile": str(session.path),
        "sessionId": session.id,
        "leafId": session.leaf_id,
        "autoCompactionEnabled": agent.config.compaction_settings(agent.model).enabled,
        "messageCount": len(session.projection().messages),
        "pendingMessageCount": len(agent.loop.queue),
    }
    if session.name:
        data["sessionName"] = session.name
    return data


@command("get_session_stats")
async def _get_session_stats(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    from agent_tui.projection.pricing import session_usage

    session = server.session
    entries = session.store.index.entries
    totals = session_usage(entries)
    roles = [e.role for e in entries if e.type == "message"]
    calls = sum(
        1
        for e in entries
        if e.role == "assistant"
        for b in (e.message or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == "toolCall"
    )
    tokens, window = server.agent.loop.context_usage()
    return {
        "sessionFile": str(session.path),
        "sessionId": session.id,
        "userMessages": roles.count("user"),
        "assistantMessages": roles.count("assistant"),
        "toolCalls": calls,
        "toolResults": roles.count("toolResult"),
        "totalMessages": len(roles),
        "tokens": {
            "input": totals.input,
            "output": totals.output,
            "cacheRead": totals.cache_read,
            "cacheWrite": totals.cache_write,
            "total": totals.tokens,
        },
        "cost": totals.cost if totals.priced else None,
        "contextUsage": {
            "tokens": tokens,
            "contextWindow": window,
            "percent": round(100 * tokens / window, 1),
        },
    }


@command("get_messages")
async def _get_messages(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    return {"messages": server.session.messages()}


@command("get_context")
async def _get_context(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    return server.session.context(text_field(cmd, "leafId", required=False))


@command("get_entries")
async def _get_entries(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    since = text_field(cmd, "since", required=False)
    entries = server.session.entries()
    if since is not None:
        ids = [e.get("id") for e in entries]
        if since not in ids:
            raise CommandError(f"get_entries: no entry {since!r}")
        entries = entries[ids.index(since) + 1 :]
    return {"entries": entries, "leafId": server.session.leaf_id}


@command("get_last_assistant_text")
async def _get_last_assistant_text(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    for message in reversed(server.session.messages()):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        if any(texts):
            return {"text": "".join(texts)}
    return {"text": None}


# -- the tree ------------------------------------------------------------------------------------


@command("branch")
async def _branch(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    entry_id = text_field(cmd, "entryId")
    assert entry_id is not None
    server.idle("branch")
    marker = server.session.branch(entry_id)
    return {"markerId": marker, "leafId": server.session.leaf_id}


@command("switch_session")
async def _switch_session(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    target = text_field(cmd, "sessionPath")
    assert target is not None
    server.idle("switch_session")
    path = Path(target).expanduser()
    if not path.is_file():
        raise CommandError(f"switch_session: no session file {target!r}")
    await server.switch(path)
    return {"cancelled": False}


@command("edit")
async def _edit(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
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


@command("set_session_name")
async def _set_session_name(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    name = text_field(cmd, "name")
    assert name is not None
    if not name.strip():
        raise CommandError("Session name cannot be empty")  # pi's words
    server.idle("set_session_name")
    server.session.rename(name)
    server.lines.write({"type": "session_info_changed", "name": server.session.name})
    return None


# -- model, thinking, compaction ----------------------------------------------------------------


@command("set_model")
async def _set_model(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    model = text_field(cmd, "modelId")
    provider = text_field(cmd, "provider", required=False)
    assert model is not None
    server.idle("set_model")
    server.agent.set_model(model, provider)
    return server.model_object()


@command("set_thinking_level")
async def _set_thinking_level(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    level = text_field(cmd, "level")
    assert level is not None
    server.agent.set_thinking_level(level)
    server.lines.write({"type": "thinking_level_changed", "level": level})
    return None


@command("get_available_thinking_levels")
async def _get_available_thinking_levels(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    from agent_tui.projection.models import lookup, supported_thinking_levels

    return {"levels": supported_thinking_levels(lookup(server.agent.model))}


@command("set_steering_mode")
async def _set_steering_mode(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.steering_mode = _queue_mode(cmd)
    return None


@command("set_follow_up_mode")
async def _set_follow_up_mode(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.follow_up_mode = _queue_mode(cmd)
    return None


def _queue_mode(cmd: JSONObject) -> Literal["all", "one-at-a-time"]:
    mode = cmd.get("mode")
    if mode == "all":
        return "all"
    if mode == "one-at-a-time":
        return "one-at-a-time"
    raise CommandError(f'{cmd["type"]}: \'mode\' must be "all" or "one-at-a-time"')


@command("compact")
async def _compact(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    focus = text_field(cmd, "customInstructions", required=False)
    server.idle("compact")
    results: list[JSONObject] = []

    async def run() -> None:
        server.compacting = True
        stream = PiEventStream(server.session.store.index, server.agent.model_info, kind="compact")
        try:
            async for event in server.agent.compact(focus):
                for record in stream.feed(event):
                    server.lines.write(record)
                    if record["type"] == "compaction_end":
                        results.append(record)
        finally:
            server.compacting = False
        end = results[-1] if results else {}
        if "result" in end:
            server.respond(cmd, "compact", end["result"])
        else:
            server.fail(cmd, "compact", str(end.get("errorMessage") or "compaction aborted"))

    server.run_task = asyncio.ensure_future(run())
    server.later(server.run_task)
    return LATER


# -- bash ----------------------------------------------------------------------------------------


@command("bash")
async def _bash(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    text = text_field(cmd, "command")
    assert text is not None
    exclude = cmd.get("excludeFromContext", False)
    if not isinstance(exclude, bool):
        raise CommandError("bash: 'excludeFromContext' must be true or false")
    server.idle("bash")
    abort = server.bash_abort = asyncio.Event()
    redactor = StreamRedactor()

    def update(delta: str) -> None:
        record: JSONObject = {"type": "bash_execution_update"}
        if isinstance(cmd.get("id"), str | int):
            record["id"] = cmd["id"]
        record["delta"] = delta
        server.lines.write(record)

    def output(chunk: str) -> None:
        safe = redactor.feed(chunk)
        if safe:
            update(safe)

    async def run() -> None:
        try:
            message = await server.agent.bash(
                text, exclude_from_context=exclude, on_output=output, abort=abort
            )
        except (StoreError, RuntimeError) as e:
            server.fail(cmd, "bash", str(e))
            return
        finally:
            server.bash_abort = None
        rest = redactor.flush()
        if rest:
            update(rest)
        data: JSONObject = {
            "output": message.get("output", ""),
            "exitCode": message.get("exitCode"),
            "cancelled": bool(message.get("cancelled")),
            "truncated": bool(message.get("truncated")),
        }
        if message.get("fullOutputPath"):
            data["fullOutputPath"] = message["fullOutputPath"]
        server.respond(cmd, "bash", data)

    server.bash_task = asyncio.ensure_future(run())
    server.later(server.bash_task)
    return LATER


@command("abort_bash")
async def _abort_bash(server: RpcServer, cmd: JSONObject) -> JSONObject | None:
    if server.bash_abort is not None:
        server.bash_abort.set()
    if server.bash_task is not None and not server.bash_task.done():
        with contextlib.suppress(Exception):
            await asyncio.shield(server.bash_task)
    return None


def _redact(text: str) -> str:
    return redact_text(text)[0] if StreamRedactor().enabled else text


# -- the process ---------------------------------------------------------------------------------


def _read_stdin(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | None]) -> None:
    """A daemon thread: each LF-terminated line of stdin (bytes, so U+2028 is not a line end), then
    None at EOF. It reads the file descriptor itself: a thread blocked inside ``sys.stdin.buffer``
    holds its lock, and the interpreter aborts when it exits on a signal meanwhile."""

    def put(item: bytes | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def read() -> None:
        pending = b""
        try:
            while chunk := os.read(0, 65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    put(line)
        except OSError:
            pass
        if pending:
            put(pending)
        put(None)

    threading.Thread(target=read, name="rpc-stdin", daemon=True).start()


async def serve(agent: Agent, lines: JsonLines, scoped_models: Sequence[str] = ()) -> int:
    server = RpcServer(agent, lines, scoped_models)
    server.watch_queue()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            os._exit(130)  # a second signal does not wait: every entry written so far is on disk
        queue.put_nowait(None)

    with contextlib.suppress(NotImplementedError, RuntimeError):
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(number, on_signal)
    _read_stdin(loop, queue)
    try:
        while True:
            raw = await queue.get()
            if raw is None or lines.closed:
                break
            await server.handle_line(raw)
        await server.stop()
        for task in list(server.pending):
            with contextlib.suppress(Exception):
                await task
        return 0
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(number)
        await server.agent.aclose()
        if server.agent is not agent:
            await agent.aclose()
        server.agent.session.close()


def run_rpc(args: argparse.Namespace) -> int:
    err = for_terminal(sys.stderr)
    try:
        config, permissions = load_settings(args, True)
    except (ConfigError, PermissionModeError) as e:
        print(_redact(str(e) if str(e).startswith("agent-tui") else f"agent-tui: {e}"), file=err)
        return 1
    cwd = os.getcwd()
    try:
        resources, _ = load_and_expand(args, config, cwd, "")
    except (PromptFileError, SkillError) as e:
        print(_redact(f"agent-tui: {e}"), file=err)
        return 1
    try:
        session = open_session(args, cwd)
    except StoreError as e:
        print(_redact(f"agent-tui: {e}"), file=err)
        return 1
    try:
        if session.note:
            print(f"agent-tui: {session.note}", file=err)
        elsewhere = cwd_notice(session.cwd, cwd)
        if elsewhere:
            print(f"agent-tui: {elsewhere}", file=err)
        if session.read_only:
            print(f"agent-tui: {session.read_only_reason or 'read-only session'}", file=err)
            return 1
        if getattr(args, "leaf", None):
            session.branch(args.leaf)
        agent = headless_agent(args, session, config, permissions, cwd, resources)
        print(f"agent-tui: rpc on session {session.path}", file=err, flush=True)
        scoped = getattr(args, "scoped_models", None) or ()
        return asyncio.run(serve(agent, JsonLines(sys.stdout.buffer), scoped))
    except StoreError as e:
        print(_redact(f"agent-tui: {e}"), file=err)
        return 1
    finally:
        session.close()


__all__ = ["CommandError", "RpcServer", "run_rpc", "serve"]
