"""Hooks in Claude Code's format: shell commands run on the agent's events, the event as JSON on stdin.

Configured as Claude Code's ``settings.json`` ``hooks``, in the config file written as TOML::

    [[hooks.PreToolUse]]
    matcher = "bash"                  # a tool name, "a|b", a regex, or "" / "*" for every tool
    [[hooks.PreToolUse.hooks]]
    type = "command"
    command = "~/bin/check-command"   # run by the shell, in the session's folder
    timeout = 30                      # seconds (60 by default); a hook still running is killed

and read from Claude Code's ``~/.claude/settings.json`` (the user's), and ``.claude/settings.json``
/ ``.claude/settings.local.json`` (the project's: only in a trusted folder). Events:
``SessionStart``, ``UserPromptSubmit``, ``PreToolUse``, ``PostToolUse``, ``PreCompact``, ``Stop``;
the input has Claude Code's field names (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``tool_name``, ``tool_input``, ``tool_response``, ``prompt``, ...). Built-in
tools are named to hooks as Claude Code names its own (``Bash``, ``Read``, ``Write``, ``Edit``,
``Grep``, ``Glob``, ``LS``; a matcher may use either name) and a ``path`` argument is also given as
``file_path``, so hooks written for Claude Code work unchanged.

Exit code 0: the stdout may be Claude Code's JSON (``decision``/``reason``, ``continue``/``stopReason``,
``systemMessage``, ``hookSpecificOutput`` with ``permissionDecision``, ``permissionDecisionReason``,
``additionalContext``); plain stdout of ``SessionStart`` and ``UserPromptSubmit`` is context for the model.
Exit code 2 blocks: its stderr is the reason. Any other failure, and a timeout, is one line for the
user and blocks nothing.

``PreToolUse`` decides as Claude Code documents (several hooks: deny over defer over ask over
allow): ``deny`` (or exit 2) blocks the call, the reason going to the model; ``defer`` hands the
call back to whoever runs ``agent-tui -p`` (see ``agent.deferred_calls``; its reason and
``updatedInput`` are ignored); ``ask`` puts agent-tui's
permission question even where nothing would have asked; ``allow`` skips the question, but only
from a hook of a source the user trusts (:attr:`HookCommand.trusted`: the user's config, the
user's Claude Code settings, a trusted folder's settings) and never for what no hook may approve
(see ``permissions.Permissions.check``). ``PreCompact`` blocks a compaction with exit 2 or
``decision: "block"``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agent_tui.agent.child_env import child_environment
from agent_tui.config_schema import Hook, convert, read_json_file
from agent_tui.projection.tool_facts import tool_facts
from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line

if TYPE_CHECKING:
    from agent_tui.agent.sandbox import Sandbox

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop")
DEFAULT_TIMEOUT = 60.0
#: Bytes of a hook's stdout or stderr kept (the first and the last half; what lies between is read
#: and dropped as it comes, so a hook printing 400 MB costs this much, not 400 MB).
OUTPUT_LIMIT = 1024 * 1024
#: What a hook adds for the model is cut as a tool's output is (its head and tail kept).
CONTEXT_LIMIT = 50 * 1024
#: Project settings that may hold hooks: read only in a trusted folder.
PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json")
_PERMISSION_MODES = {
    "ask": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "auto": "bypassPermissions",
    "read-only": "plan",
}


@dataclass(frozen=True, slots=True)
class HookCommand:
    event: str
    matcher: str
    command: str
    timeout: float
    source: str
    #: From a source the user trusts (their own config or settings, or a trusted folder's): only
    #: such a hook's ``permissionDecision: "allow"`` may skip the permission question.
    trusted: bool = False
    project: bool = False  # from the folder's own settings (accepted per folder, see agent.trust)

    def matches(self, subject: str | None, aliases: Sequence[str] = ()) -> bool:
        if subject is None or self.matcher in ("", "*"):
            return True
        names = [subject, *aliases]
        if re.fullmatch(r"[\w|-]+", self.matcher):
            return any(n in self.matcher.split("|") for n in names)
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return False
        return any(pattern.search(n) for n in names)


@dataclass(slots=True)
class HookOutcome:
    """What the hooks of one event decided, merged."""

    blocked: bool = False
    reason: str = ""  # why it was blocked (exit 2's stderr, or the JSON reason)
    context: list[str] = field(default_factory=list)  # text for the model
    decision: str | None = None  # PreToolUse: "allow", "ask" or "defer" (a deny is ``blocked``)
    decision_reason: str = ""  # the ask's (or allow's) permissionDecisionReason, for the user
    updated_input: dict[str, Any] | None = None
    notices: list[str] = field(default_factory=list)  # one line each, for the user


class HookEntry(Hook, frozen=True, forbid_unknown_fields=False):
    """One hook as Claude Code writes it (the config schema's :class:`agent_tui.config_schema.Hook`;
    the keys of its other kinds of hook, ``prompt`` ..., are left alone)."""


class HookGroupEntry(msgspec.Struct, frozen=True):
    """One entry of an event's list: a matcher and its hooks, each read on its own."""

    matcher: str | None = None
    hooks: list[Any] = msgspec.field(default_factory=list)


class SettingsHooks(msgspec.Struct, frozen=True):
    """Claude Code's ``settings.json`` as the hooks see it (its other keys are not theirs)."""

    hooks: dict[str, Any] | None = None


def parse_hooks(
    data: Any, source: str, *, trusted: bool = False, project: bool = False
) -> tuple[list[HookCommand], list[str]]:
    """The ``hooks`` table of a config (TOML or JSON) read as :class:`HookGroupEntry` and
    :class:`HookEntry`: an entry of the wrong type, or one agent-tui does not run, is one warning
    naming it and ``source``, and the others load. ``trusted``: the source is one the user trusts
    (see :attr:`HookCommand.trusted`)."""
    commands: list[HookCommand] = []
    warnings: list[str] = []
    if data is None:
        return commands, warnings
    words = source.endswith(".json")
    try:
        events = convert(data, dict[str, Any], key="hooks", json_words=words)
    except ValueError as e:
        return commands, [f"{source}: {e}"]
    for event, groups in events.items():
        if event not in EVENTS:
            warnings.append(f"hooks in {source}: event {event!r} is not one agent-tui runs (skipped)")
            continue
        try:
            listed = convert(groups, list[Any], key=f"hooks.{event}", json_words=words)
        except ValueError as e:
            warnings.append(f"{source}: {e}")
            continue
        for i, raw_group in enumerate(listed):
            try:
                group = convert(raw_group, HookGroupEntry, key=f"hooks.{event}[{i}]", json_words=words)
            except ValueError as e:
                warnings.append(f"{source}: {e} (its hooks skipped)")
                continue
            for j, raw_hook in enumerate(group.hooks):
                key = f"hooks.{event}[{i}].hooks[{j}]"
                try:
                    hook = convert(raw_hook, HookEntry, key=key, json_words=words)
                except ValueError as e:
                    warnings.append(f"{source}: {e} (that hook skipped)")
                    continue
                if hook.type != "command":
                    warnings.append(f'hooks.{event} in {source}: only type = "command" hooks run (skipped)')
                    continue
                if hook.command is None or not hook.command.strip():
                    warnings.append(f"hooks.{event} in {source}: a hook needs a command")
                    continue
                matcher = group.matcher or ""
                commands.append(
                    HookCommand(event, matcher, hook.command, hook.timeout, source, trusted, project)
                )
    return commands, warnings


def _settings_hooks(path: Path, shown: str = "") -> tuple[Any, list[str]]:
    """The ``hooks`` of a Claude Code settings file (None: none, or no file), and a line per
    problem, naming the file as ``shown``."""
    settings, problems = read_json_file(path, SettingsHooks, shown or str(path), "its hooks not read")
    return (settings.hooks if settings is not None else None), problems


def project_files(cwd: str | Path) -> list[Path]:
    """The project's settings files that hold hooks (they need the folder's trust)."""
    found = []
    for name in PROJECT_FILES:
        path = Path(cwd) / name
        if path.is_file() and _settings_hooks(path)[0]:
            found.append(path)
    return found


def read_hooks(
    config_data: Mapping[str, Any],
    cwd: str | Path,
    *,
    home: Path | None = None,
    trusted: bool = False,
    config_name: str = "config.toml",
) -> tuple[list[HookCommand], list[str]]:
    """Every hook: the config file's, Claude Code's user settings', and the project's when trusted."""
    home = Path.home() if home is None else home
    # the user's own files are trusted; a folder's only when the user trusts the folder (and only
    # then are they read at all)
    commands, warnings = parse_hooks(config_data.get("hooks"), config_name, trusted=True)
    paths = [(home / ".claude" / "settings.json", False)]
    if trusted:
        paths += [(Path(cwd) / name, True) for name in PROJECT_FILES]
    for path, project in paths:
        shown = str(path).replace(str(home), "~", 1)
        data, problems = _settings_hooks(path, shown)
        warnings += problems
        found, problems = parse_hooks(data, shown, trusted=True, project=project)
        commands += found
        warnings += problems
    return commands, warnings


class Hooks:
    """The hooks of one agent: run per event, results merged into a :class:`HookOutcome`."""

    def __init__(self, commands: Sequence[HookCommand], cwd: str) -> None:
        self.commands = list(commands)
        self.cwd = cwd
        #: Fields every event carries (session_id, transcript_path, permission_mode), set by the loop.
        self.common: dict[str, Any] = {}
        #: Where the hooks run (``agent.sandbox``, the session's, set by the loop; None: as they are).
        self.sandbox: Sandbox | None = None

    def __bool__(self) -> bool:
        return bool(self.commands)

    def has(self, event: str) -> bool:
        return any(c.event == event for c in self.commands)

    def set_permission_mode(self, mode: str) -> None:
        self.common["permission_mode"] = _PERMISSION_MODES.get(mode, "default")

    async def run(self, event: str, fields: Mapping[str, Any], subject: str | None = None) -> HookOutcome:
        """Run the hooks of ``event`` whose matcher takes ``subject`` (a tool name, a source, a
        trigger), all at once; merge what they say."""
        claude = tool_facts(subject).claude_name if subject is not None else ""
        aliases = [claude] if claude else []  # Claude Code's name for the tool matches too
        chosen = [c for c in self.commands if c.event == event and c.matches(subject, aliases)]
        outcome = HookOutcome()
        if not chosen:
            return outcome
        payload = {**self.common, "cwd": self.cwd, "hook_event_name": event, **fields}
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        results = await asyncio.gather(*(self._run_one(c, data) for c in chosen))
        for command, (code, out, err, failure) in zip(chosen, results, strict=True):
            _merge(outcome, command, code, out, err, failure)
        return outcome

    async def _run_one(self, hook: HookCommand, data: bytes) -> tuple[int | None, str, str, str | None]:
        env = child_environment()
        env["CLAUDE_PROJECT_DIR"] = self.cwd
        env["AGENT_TUI_PROJECT_DIR"] = self.cwd
        argv = ["/bin/sh", "-c", hook.command]  # what create_subprocess_shell runs
        if self.sandbox is not None:
            argv = self.sandbox.wrap(argv, self.cwd, env)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            return None, "", "", f"cannot start: {e.strerror}"
        try:
            out, err = await asyncio.wait_for(_communicate(process, data), timeout=hook.timeout)
        except TimeoutError:
            _kill_group(process)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), timeout=2)
            return None, "", "", f"timed out after {hook.timeout:g} s (killed)"
        except asyncio.CancelledError:
            _kill_group(process)
            raise
        except (BrokenPipeError, ConnectionResetError):  # it did not read its stdin: fine
            out, err = "", ""
            await process.wait()
        return (process.returncode, out, err, None)


class _Capped:
    """A stream's first and last ``limit / 2`` bytes, and how many lay between them (dropped)."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail: collections.deque[bytes] = (
            collections.deque()
        )  # chunks: the last ``half`` and less than one more
        self.held = 0  # bytes in ``tail``
        self.seen = 0

    def add(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.held += len(chunk)
        while self.held - len(self.tail[0]) >= self.half:
            self.held -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.half :] if self.tail else b""
        cut = self.seen - len(self.head) - len(tail)
        if not cut:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        head = bytes(self.head).decode("utf-8", "ignore")
        return f"{head}\n[... {cut:,} bytes of the hook's output cut ...]\n{tail.decode('utf-8', 'ignore')}"


async def _communicate(process: asyncio.subprocess.Process, data: bytes) -> tuple[str, str]:
    """Feed ``data`` to the hook and read its stdout and stderr as they come, each capped
    (:class:`_Capped`), until it exits."""

    async def feed() -> None:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it did not read it: fine
            process.stdin.write(data)
            await process.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
            process.stdin.close()

    async def drain(stream: asyncio.StreamReader | None, into: _Capped) -> None:
        while stream is not None and (chunk := await stream.read(65536)):
            into.add(chunk)

    out, err = _Capped(), _Capped()
    await asyncio.gather(feed(), drain(process.stdout, out), drain(process.stderr, err))
    await process.wait()
    return out.text(), err.text()


def _capped_context(text: str, limit: int = CONTEXT_LIMIT) -> str:
    """A hook's text for the model, cut as a tool's output is: the head and the tail kept."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    half = limit // 2
    head = data[:half].decode("utf-8", "ignore")
    tail = data[-half:].decode("utf-8", "ignore")
    return f"{head}\n[... {len(data) - 2 * half:,} bytes of the hook's output cut ...]\n{tail}"


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(process.pid, signal.SIGKILL)


def _line(text: str, limit: int = 300) -> str:
    text = visible_line(redact_text(" ".join(text.split()))[0])
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _merge(
    outcome: HookOutcome, hook: HookCommand, code: int | None, out: str, err: str, failure: str | None
) -> None:
    name = f"{hook.event} hook `{_line(hook.command, 60)}`"
    if failure is not None:
        outcome.notices.append(f"{name} {failure}")
        return
    if code == 2:
        outcome.blocked = True
        reason = _capped_context(err.strip()) or f"blocked by {name}"
        outcome.reason = f"{outcome.reason}\n{reason}".strip()
        return
    if code != 0:
        detail = _line(err or out)
        outcome.notices.append(f"{name} failed (exit {code}){': ' + detail if detail else ''}")
        return
    reply: Any = None
    stripped = out.strip()
    if stripped.startswith("{"):
        with contextlib.suppress(ValueError, RecursionError):  # nested too deeply: taken as text
            reply = json.loads(stripped)
    if not isinstance(reply, Mapping):
        if stripped and hook.event in ("SessionStart", "UserPromptSubmit"):
            outcome.context.append(_capped_context(stripped))
        return
    if isinstance(reply.get("systemMessage"), str):
        outcome.notices.append(_line(reply["systemMessage"]))
    specific = reply.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        outcome.context.append(_capped_context(context.strip()))
    decision = reply.get("decision")
    reason = str(reply.get("reason") or "")
    if reply.get("continue") is False:
        outcome.blocked = True
        outcome.reason = (
            f"{outcome.reason}\n{reply.get('stopReason') or reason or f'stopped by {name}'}".strip()
        )
    if hook.event == "PreToolUse":
        permission = specific.get("permissionDecision")
        legacy = {"approve": "allow", "block": "deny"}.get(str(decision)) if decision else None
        permission = permission if permission in ("allow", "deny", "ask", "defer") else legacy
        why = str(specific.get("permissionDecisionReason") or reason)
        if permission == "deny":
            outcome.blocked = True
            outcome.reason = f"{outcome.reason}\n{why or f'denied by {name}'}".strip()
        elif permission == "defer":  # over ask and allow; its reason is not shown to anyone
            outcome.decision, outcome.decision_reason = "defer", ""
        elif permission == "allow" and not hook.trusted:  # never widens a permission
            outcome.notices.append(f"{name} from {hook.source} said allow: ignored (not a source you trust)")
        elif outcome.decision not in ("ask", "defer") and (
            permission == "ask" or (permission and outcome.decision is None)
        ):
            # ask wins over allow; the first ask's (or allow's) reason is kept
            outcome.decision, outcome.decision_reason = permission, _line(why)
        updated = specific.get("updatedInput")
        if isinstance(updated, Mapping) and permission != "defer":
            outcome.updated_input = dict(updated)
    elif decision == "block":
        outcome.blocked = True
        outcome.reason = f"{outcome.reason}\n{reason or f'blocked by {name}'}".strip()


def tool_input(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's arguments as a hook reads them: its ``path_argument`` also as Claude Code's
    ``file_path``."""
    data = dict(arguments)
    named = tool_facts(name).path_argument
    if named is not None and named in data and "file_path" not in data:
        data["file_path"] = data[named]
    return data


def hook_tool_name(name: str) -> str:
    """The name a hook reads: Claude Code's for a tool it has (``Bash``), else ours."""
    return tool_facts(name).claude_name or name


__all__ = [
    "EVENTS",
    "PROJECT_FILES",
    "HookCommand",
    "HookOutcome",
    "Hooks",
    "hook_tool_name",
    "parse_hooks",
    "project_files",
    "read_hooks",
    "tool_input",
]
