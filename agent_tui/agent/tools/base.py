"""The tool interface: a name, a description, a JSON schema, and an async ``execute``.

A tool returns a :class:`ToolResult` (content blocks for the model, details for
the UI) or raises :class:`ToolError`, whose message becomes an error result.
``ToolContext.signal`` is set when the user aborts; long-running tools watch it
(bash kills its process group), the others are simply cancelled. Tools do their
blocking work through :func:`in_thread`, a daemon thread: a read stuck in the
kernel (a network file system, a device) can be abandoned on abort and never
keeps the process (and its session lock) alive at exit, as asyncio's default
executor would.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agent_tui.projection.tool_facts import TOOL_FACTS
from agent_tui.projection.tool_facts import AcpKind as AcpKind  # the tools name these types here too
from agent_tui.projection.tool_facts import FileEffect as FileEffect

if TYPE_CHECKING:
    from agent_tui.agent.sandbox import Sandbox

T = TypeVar("T")
JSONObject = dict[str, Any]
#: The permission policy's last word on a write, asked with the real path about to be written and
#: its link count (1 for a new file): None to go ahead, else the refusal the model reads.
WriteGuard = Callable[[str, int], "str | None"]


class ToolError(Exception):
    """A failure the model should read: the message is the tool result's text."""


@dataclass(slots=True)
class ToolResult:
    content: list[JSONObject]
    details: JSONObject | None = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: JSONObject | None = None, *, is_error: bool = False) -> ToolResult:
        return cls([{"type": "text", "text": text}], details, is_error)


@dataclass(slots=True)
class ToolContext:
    cwd: str
    signal: asyncio.Event = field(default_factory=asyncio.Event)  # set on abort
    call_id: str = ""
    write_guard: WriteGuard | None = None  # write/edit ask it about the file they opened
    #: pi's ``onUpdate``: a partial result (``{content, details}``) while the tool runs; None: nobody listens
    on_update: Callable[[JSONObject], None] | None = None
    #: Where the run's events go (an ``agent.events`` event): the ``task`` tool forwards its
    #: subagent's there; None: nobody listens
    emit: Callable[[Any], None] | None = None
    #: Where the commands a tool starts run (``agent.sandbox``; None: as they are)
    sandbox: Sandbox | None = None

    def check(self) -> None:
        if self.signal.is_set():
            raise ToolError("Operation aborted")


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a daemon thread of its own; cancelling the await abandons it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def work() -> None:
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            error = e
            loop.call_soon_threadsafe(settle, lambda: future.set_exception(error))
        else:
            loop.call_soon_threadsafe(settle, lambda: future.set_result(result))

    threading.Thread(target=work, name="agent-tui-tool", daemon=True).start()
    return await future


class Tool:
    name: str = ""
    description: str = ""
    snippet: str = ""  # one line for the system prompt's tool list
    guidelines: tuple[str, ...] = ()  # rules the system prompt adds when the tool is active
    parameters: JSONObject = {}  # noqa: RUF012 - class-level schema, never mutated
    #: What the tool is, so the permission policy, hooks, checkpoints, ACP and exports ask the tool
    #: rather than match its name: its row in ``projection.tool_facts.TOOL_FACTS`` (the one place
    #: a tool's facts are written; the layers below read the same row by a call's name), copied
    #: here by ``__init_subclass__``. A tool with no row (an MCP tool) sets them itself.
    #: A tool that only reads never changes a file or runs a program.
    reads_only: bool = False
    file_effect: FileEffect = "any"
    path_argument: str | None = None  # the argument naming the file it reads or changes
    claude_name: str = ""  # Claude Code's name for it in permission rules (``Bash``, ``Edit``)
    acp_kind: AcpKind = "other"
    #: False: the call itself never asks the permission policy (``todo_write`` only records;
    #: ``task``'s subagent asks for each of its own calls); a hook's ``ask`` still asks.
    needs_permission: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        facts = TOOL_FACTS.get(cls.__dict__.get("name", ""))
        if facts is None:
            return
        for field_name in ("reads_only", "file_effect", "path_argument", "claude_name", "acp_kind"):
            if field_name not in cls.__dict__:  # what the class says of itself wins
                setattr(cls, field_name, getattr(facts, field_name))

    def declaration(self) -> JSONObject:
        """What the model is told: pi's tool declaration {name, description, parameters}."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def prepare_arguments(self, args: JSONObject) -> JSONObject:
        """Repair common argument mistakes before validation (pi's prepareArguments)."""
        return args

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


# -- arguments --------------------------------------------------------------------------------

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def validate_arguments(tool: Tool, args: object) -> JSONObject:
    """Check ``args`` against the tool's schema (the subset our schemas use); raise ToolError listing problems."""
    if not isinstance(args, dict):
        raise ToolError(f'Validation failed for tool "{tool.name}":\n  - arguments: must be an object')
    problems: list[str] = []
    _check(tool.parameters, args, "", problems)
    if problems:
        raise ToolError(
            f'Validation failed for tool "{tool.name}":\n'
            + "\n".join(f"  - {p}" for p in problems)
            + f"\n\nReceived arguments:\n{_short(args)}"
        )
    return args


def _check(schema: JSONObject, value: object, where: str, problems: list[str]) -> None:
    kind = schema.get("type")
    name = where or "arguments"
    if isinstance(kind, str):
        types = _JSON_TYPES.get(kind, (object,))
        if isinstance(value, bool) and kind in ("number", "integer"):
            problems.append(f"{name}: must be {kind}")
            return
        if not isinstance(value, types):
            problems.append(f"{name}: must be {kind}")
            return
    if isinstance(value, dict):
        for required in schema.get("required", []):
            if required not in value:
                problems.append(f"{where + '.' if where else ''}{required}: is required")
        for key, sub in (schema.get("properties") or {}).items():
            if key in value:
                _check(sub, value[key], f"{where + '.' if where else ''}{key}", problems)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(schema["items"], item, f"{name}[{i}]", problems)


def _short(args: JSONObject) -> str:
    import json

    text = json.dumps(args, ensure_ascii=False)
    return text if len(text) <= 500 else text[:500] + "..."


# -- paths ------------------------------------------------------------------------------------

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def resolve_path(path: str, cwd: str) -> Path:
    """pi's resolveToCwd: ``~`` expanded, a leading ``@`` dropped, odd spaces normalized, relative to cwd."""
    text = _UNICODE_SPACES.sub(" ", path)
    if text.startswith("@"):
        text = text[1:]
    if text == "~" or text.startswith("~/"):
        text = os.path.expanduser("~") + text[1:]
    candidate = Path(text)
    return candidate if candidate.is_absolute() else Path(cwd) / candidate


def existing_directory(path: str, cwd: str) -> Path:
    """``path`` resolved against ``cwd``; a ToolError unless it is a directory."""
    directory = resolve_path(path, cwd)
    if not directory.exists():
        raise ToolError(f"Path not found: {directory}")
    if not directory.is_dir():
        raise ToolError(f"Not a directory: {directory}")
    return directory


def resolve_read_path(path: str, cwd: str) -> Path:
    """As resolve_path, also trying the NFD form and curly apostrophes macOS uses in file names."""
    resolved = resolve_path(path, cwd)
    if resolved.exists():
        return resolved
    text = str(resolved)
    for variant in (
        re.sub(r" (AM|PM)\.", "\u202f\\1.", text),
        unicodedata.normalize("NFD", text),
        text.replace("'", "\u2019"),
        unicodedata.normalize("NFD", text).replace("'", "\u2019"),
    ):
        if variant != text and Path(variant).exists():
            return Path(variant)
    return resolved


def number_arg(args: JSONObject, name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"{name} must be a number")
    return int(value)
