"""The RPC server of ``agent-tui --mode rpc``: one session's command dispatch, responses and runs.

:class:`RpcServer` reads one command line (JSON), finds its handler in the command table
(:data:`agent_tui.cli.rpc_commands.HANDLERS`, joined from the ``rpc_*_commands`` modules' tables;
they see the server as an :class:`~agent_tui.cli.rpc_host.RpcHost` and never import it) and
writes its response: ``{"type": "response", "command", "success", "data" | "error", "id"}``, the
command's ``id`` repeated. A run (a prompt, a resumed queue) streams its events as pi's records
(:class:`agent_tui.sdk.PiEventStream`) while further commands are read; a command that answers
later (``abort``, ``compact``, ``bash``) is a pending task. The process around it (stdin, signals,
the command line) is :mod:`agent_tui.cli.rpc_mode`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Iterable, Sequence
from pathlib import Path

from agent_tui.agent.events import AgentEvent, EntryAppended
from agent_tui.cli import rpc_model_commands
from agent_tui.cli.json_mode import JsonLines, encode_record
from agent_tui.cli.rpc_commands import HANDLERS
from agent_tui.cli.rpc_permissions import ClientQuestions
from agent_tui.cli.rpc_registry import LATER, NULL, CommandError
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


#: A command line longer than this is refused (a prompt's images, base64, fit well inside it).
MAX_COMMAND_BYTES = 256 * 1024 * 1024
#: Commands are a few levels deep; deeper ones are refused before any handler walks them.
MAX_COMMAND_DEPTH = 64


def nesting_over(value: object, limit: int) -> bool:
    """Is ``value`` (parsed JSON) nested more than ``limit`` levels deep? Iterative: no recursion."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


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
        self.delivered: list[JSONObject] = []  # deliveries' queue_updates not written yet (watch_queue)
        #: Permission questions put to the client (pi's extension_ui_request), awaiting its answer.
        self.questions = ClientQuestions(lines.write)
        permissions = agent.loop.permissions
        if permissions is not None and permissions.approver is None:  # the client is who is asked
            permissions.approver = self.questions.approve

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
        record["error"] = redacted(error)
        self.lines.write(record)

    # -- input --------------------------------------------------------------------------------

    def refuse_long_line(self, size: int) -> None:
        """A command line over ``MAX_COMMAND_BYTES`` (not kept: only its length is known)."""
        self.fail(None, "parse", f"the command is {size:,} bytes, over {MAX_COMMAND_BYTES:,}")

    async def handle_line(self, raw: bytes) -> None:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip():
            return
        if len(line) > MAX_COMMAND_BYTES:
            self.refuse_long_line(len(line))
            return
        try:
            cmd = json.loads(line)
        except ValueError as e:
            self.fail(None, "parse", f"Failed to parse command: {e}")
            return
        except RecursionError:  # 5,000 '[' ended the process with a traceback, and the reply with it
            self.fail(None, "parse", f"Failed to parse command: nested deeper than {MAX_COMMAND_DEPTH}")
            return
        if nesting_over(cmd, MAX_COMMAND_DEPTH):
            self.fail(None, "parse", f"Failed to parse command: nested deeper than {MAX_COMMAND_DEPTH}")
            return
        if not isinstance(cmd, dict):
            self.fail(None, "parse", f"a command is a JSON object, not {type(cmd).__name__}")
            return
        name = cmd.get("type")
        if not isinstance(name, str):
            self.fail(cmd, "parse", "the command has no 'type' (a string naming the command)")
            return
        if name == "extension_ui_response":  # an answer to a question; no response, as pi
            self.questions.answer(cmd)
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
                    if isinstance(event, EntryAppended) and event.role == "user":
                        self.write_delivered()
                    for record in stream.feed(event):
                        self.lines.write(record)
                    stop = getattr(event, "stop_reason", stop)
            except Exception as e:  # the loop said so in its events (TurnError, TurnDone) first
                print(
                    redacted(f"agent-tui: internal error: {type(e).__name__}: {e}"),
                    file=for_terminal(sys.stderr),  # the message may quote a model's or a file's text
                    flush=True,
                )
                return
            finally:
                self.write_delivered()
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
        """pi's ``queue_update``: both queues, whole, after every change (a steer, a delivery, a
        clear). A delivery's is written where pi sends it, right before the delivered message's
        records: the loop drains the queue ahead of the events the run has not written yet (the
        tool's end, the reply's deltas)."""

        def changed() -> None:
            record = {"type": "queue_update", **self.agent.queued()}
            if self.agent.loop.queue.delivering and self.run_task is not None and not self.run_task.done():
                self.delivered.append(record)
            else:
                self.lines.write(record)

        self.agent.loop.queue.on_change = changed

    def write_delivered(self) -> None:
        """The queue_updates of deliveries, held until the run's records reach the delivered message."""
        held, self.delivered = self.delivered, []
        for record in held:
            self.lines.write(record)

    def idle(self, what: str) -> None:
        if self.busy or self.agent.running:
            raise CommandError(f"{what}: the agent is running (abort it or wait for agent_settled)")
        if self.bash_task is not None and not self.bash_task.done():
            raise CommandError(f"{what}: a bash command is running (abort_bash it or wait)")


def redacted(text: str) -> str:
    """``text`` with the secrets agent-tui knows of replaced (an error may quote them)."""
    return redact_text(text)[0] if StreamRedactor().enabled else text


__all__ = ["RpcServer", "redacted"]
