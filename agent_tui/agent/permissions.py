"""Which tool calls run, which need the user's yes, which are refused.

Three modes:

- ``ask`` (the app's default, Claude Code's ``default``): ``bash``, ``write``,
  ``edit`` (inside the working directory too) and any tool that is not known to
  only read (``Tool.file_effect`` not ``none``, or not ``reads_only``) wait for
  the user's answer unless a permission rule allows the call: allow once, allow
  for the rest of this process ("allow-session"), always (a rule), or deny.
- ``auto`` (print mode's default): everything runs.
- ``read-only``: ``write``, ``edit``, ``bash`` (and unknown tools) are refused
  with a tool error the model reads.
- ``accept-edits`` (Claude Code's ``acceptEdits``): as ``ask``, but a tool that
  changes only the file it names (``Tool.file_effect == "path"``) passes inside
  the working directory, never outside it, never for a file that decides what
  agent-tui or git runs (:data:`GUARDED_DIRS`, :data:`GUARDED_NAMES`, git's own
  files) nor one with several hard links; commands still ask.
- ``plan``: as ``ask``, but nothing that changes files or runs programs runs
  (``Tool.file_effect`` not ``none``): refused with a message telling the model
  it is planning (:mod:`agent_tui.agent.permission_modes` has the rest).

The working directory is the folder the user started agent-tui in (the
process's cwd, which the agent loop passes), never the ``cwd`` a session
file's header names: a handed-over session cannot widen the check. Paths are
resolved the way the tools resolve them, then with ``os.path.realpath``, and
compared with the real path of that directory, so ``..``, absolute paths,
symlinks pointing out and a symlinked cwd cannot pass for "inside"; the write
and edit tools then open the file without following a final symlink and check
it is the file that was checked (see ``tools.safe_open``).

"Allow for this session" remembers the exact call: the same command string
(byte for byte), or the same resolved file path. It is never a pattern: a
command ending in ``*`` covers only itself.

A ``PreToolUse`` hook may vote on a call (:class:`HookVote`, as Claude Code's
``permissionDecision``): ``ask`` puts the question even where nothing would have asked (a read,
a write inside the working directory, an allowed-for-this-session call, ``auto`` mode; with no
one to answer, the call is refused), but never lifts a ``read-only`` refusal; ``allow`` skips
the question in ``ask`` mode, except for git's own files and files with several hard links,
which no hook may approve. The loop passes only the ``allow`` of hooks the user trusts.

Persistent rules (:mod:`agent_tui.agent.permission_rules`, Claude Code's ``Bash(npm test:*)``...)
are asked first: a ``deny`` rule refuses in every mode (``rule-deny``), an ``ask`` rule asks even in
``auto`` mode, an ``allow`` rule passes a call that would ask (``rule-allow``), but never one that
writes a file deciding what agent-tui or git runs, nor a protected call. "Always allow"
(:attr:`Decision.ALLOW_ALWAYS`) keeps the request's ``rule`` in ``.claude/settings.local.json``.

Every decision on a gated call is one ``custom`` entry (pi's state entry type:
never in context, pi-compatible) with ``customType`` ``agent-tui.permission``
and ``data`` ``{tool, summary, decision, scope, mode, toolCallId}``; decisions
are ``allow-once``, ``allow-session``, ``allow-always``, ``deny``, ``auto``, ``read-only-refused``,
``rule-allow``, ``rule-deny`` and ``hook-allow`` (a hook's allow skipped the question); ``hook``
is ``"ask"`` or ``"allow"`` when a hook voted, ``rule`` and ``source`` name the rule that decided. Those entries are a record, never a grant: an
"allow for this session" lives in this process's memory only, so a session file
(which anyone can hand over) can never widen what runs without asking.

The face decides how to ask: an :data:`Approver` is an async callback from a
:class:`PermissionRequest` to a :class:`Decision` (the app shows a modal; print
mode asks on the terminal, or refuses when stdin is not one). An approver that fails (an
editor answering with an error, a lost connection) is a refusal, recorded as ``deny``: a question
is never answered by accident, and the turn goes on with the call's refusal as its result.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent_tui.agent.tools.base import FileEffect, Tool, WriteGuard, resolve_path
from agent_tui.projection.tool_facts import TOOL_FACTS, tool_facts
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import redact_text

if TYPE_CHECKING:
    from agent_tui.agent.permission_rules import PermissionRules, Ruling
    from agent_tui.agent.sandbox import Sandbox
    from agent_tui.config import Config

RECORD_TYPE = "agent-tui.permission"
MODE_ENV = "AGENT_TUI_PERMISSIONS"
#: The tools that read the files or folders their path names (never asked), and those that change
#: only the file it names (asked by where it lies), from the tool facts table.
READ_TOOLS = frozenset(n for n, f in TOOL_FACTS.items() if f.reads_only and f.path_argument)
FILE_TOOLS = frozenset(n for n, f in TOOL_FACTS.items() if f.file_effect == "path")
SUMMARY_LIMIT = 200
#: Files that decide what git runs (hooks, config, submodule URLs): writing them always asks.
GIT_FILES = frozenset({".gitconfig", ".gitmodules", ".gitattributes"})
#: Folders every file of which decides what agent-tui (or git) runs or allows, wherever they are:
#: hooks and permission rules (``.claude``), MCP servers, prompt templates, skills, SYSTEM.md
#: (``.pi``, ``.agent-tui``, ``.agents``), git's hooks (``.git``, ``.husky``). Compared case-blind
#: (a case-insensitive file system takes ``.Claude`` for ``.claude``).
GUARDED_DIRS = frozenset({".git", ".claude", ".pi", ".agent-tui", ".agents", ".husky"})
#: Files that do, in any folder: MCP servers (``.mcp.json``, ``~/.claude.json``), the system
#: prompt (AGENTS.md / CLAUDE.md are read from the parent folders too), what git runs.
GUARDED_NAMES = frozenset(
    {
        *GIT_FILES,
        ".mcp.json",
        ".claude.json",
        "agents.md",
        "agents.override.md",
        "claude.md",
        "system.md",
        "append_system.md",
    }
)
#: Commands that only read the files they name: a ``bash`` command made of these alone (and no
#: ``>``) is not taken for a change of a guarded file it names.
READ_COMMANDS = frozenset(
    {"cat", "less", "more", "head", "tail", "grep", "rg", "wc", "ls", "stat", "file", "diff", "jq", "bat"}
    | {"echo", "printf", "true", "test", "[", "md5sum", "sha256sum", "realpath", "readlink", "cd", "pwd"}
)


class PermissionMode(StrEnum):
    """In the order Shift+Tab cycles through them."""

    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    PLAN = "plan"
    AUTO = "auto"
    READ_ONLY = "read-only"


class Decision(StrEnum):
    """What an approver answers."""

    ALLOW_ONCE = "allow-once"
    ALLOW_SESSION = "allow-session"
    #: Allow and keep the request's ``rule`` (Claude Code's syntax, e.g. ``Bash(npm test:*)``) in
    #: the project's local settings, exactly as the question showed it.
    ALLOW_ALWAYS = "allow-always"
    DENY = "deny"


#: What is recorded: an approver's decision, or the mode's.
RECORDED_DECISIONS = (
    "allow-once",
    "allow-session",
    "allow-always",
    "deny",
    "auto",
    "accept-edits",
    "read-only-refused",
    "plan-refused",
    "hook-allow",
    "rule-allow",
    "rule-deny",
)


class PermissionModeError(Exception):
    """A permission mode that does not exist (the message names the accepted ones)."""


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """One tool call that needs the user's answer (or that the mode decides)."""

    tool: str
    call_id: str
    arguments: Mapping[str, Any]  # as the model sent them; show ``summary``, which is redacted
    summary: str  # one line: the command, or the path (and where it really points)
    reason: str  # why it is gated, e.g. "runs a shell command"
    scope: str  # what is recorded for "allow for this session", e.g. "bash:npm test" (redacted)
    cwd: str
    path: str | None = None  # write/edit: the real path of the target
    #: What "allow for this session" remembers in memory: the exact call (unredacted; never recorded).
    key: str = ""
    #: No hook may approve it (git's own files, a file with several hard links): always asks.
    protected: bool = False
    #: The file that decides what agent-tui runs or allows this call writes (or, for ``bash``, names
    #: in a command that may change it), as shown: asked every time (never remembered for the
    #: session, never approved by a hook), reported in ``auto`` mode.
    config_file: str | None = None
    #: The permission rule "always allow" would keep, as shown in the question (Claude Code's
    #: syntax); None: this call cannot be allowed permanently (a guarded file, a protected call).
    rule: str | None = None

    @property
    def exact(self) -> str:
        return self.key or self.scope

    def prompt(self) -> str:
        """A one-line question for a terminal or a modal title."""
        return f"{self.tool} {self.summary} ({self.reason})"

    def details(self) -> str:
        """The whole call, as the user must see it before answering (``summary`` is one cut line):
        a command with every line of it, a path and where it really points, or the arguments of
        another tool; redacted, never shortened. Not sanitized: the face makes it visible."""
        if self.tool == "bash":
            text = str(self.arguments.get("command", ""))
        elif self.tool in FILE_TOOLS:
            text = str(self.arguments.get(_path_argument(self.tool), ""))
            if self.path is not None and os.path.normpath(resolve_path(text, self.cwd)) != self.path:
                text += f"\n-> {self.path}"
        else:
            text = _arguments_text(self.arguments, indent=2)
        return redact_text(text)[0]


Approver = Callable[[PermissionRequest], Awaitable[Decision]]


@dataclass(frozen=True, slots=True)
class HookVote:
    """What ``PreToolUse`` hooks decided about one call (Claude Code's ``permissionDecision``)."""

    decision: Literal["allow", "ask"]
    reason: str = ""  # the hook's permissionDecisionReason (shown in the question)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome for one call: run it or not, and what to record."""

    allowed: bool
    decision: str | None  # recorded decision; None: the call is not gated (nothing recorded)
    request: PermissionRequest | None = None
    message: str | None = None  # the tool error the model reads when the call is refused
    remembered: bool = False  # allowed by an earlier allow-session answer
    hook: str | None = None  # "ask" or "allow": a PreToolUse hook's vote decided or forced the question
    notice: str | None = None  # one line for the user (auto mode: "the model changed .mcp.json")
    rule: str | None = None  # the permission rule(s) that decided or asked (agent.permission_rules)
    source: str | None = None  # the file(s) it came from

    def entry(self, mode: PermissionMode) -> JSONObject | None:
        """The ``custom`` entry fields recording this verdict (None when there is nothing to record)."""
        if self.decision is None or self.request is None:
            return None
        data: JSONObject = {
            "tool": self.request.tool,
            "summary": self.request.summary,
            "decision": self.decision,
            "scope": self.request.scope,
            "mode": mode.value,
            "toolCallId": self.request.call_id,
        }
        if self.remembered:
            data["remembered"] = True
        if self.hook is not None:
            data["hook"] = self.hook
        if self.rule is not None:
            data["rule"] = self.rule
            data["source"] = self.source or ""
        return {"type": "custom", "customType": RECORD_TYPE, "data": data}


def parse_mode(value: str | None) -> PermissionMode | None:
    if value is None or not value.strip():
        return None
    try:
        return PermissionMode(value.strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in PermissionMode)
        raise PermissionModeError(
            f"agent-tui: unknown permission mode {value!r}: use one of {choices}"
        ) from None


def resolve_mode(
    flag: str | None,
    *,
    default: PermissionMode,
    config_data: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> PermissionMode:
    """The mode: ``--permissions`` over ``AGENT_TUI_PERMISSIONS`` over ``permissions = "..."`` in the
    config file over the face's default (``ask`` for the app, ``auto`` for print mode)."""
    env = os.environ if env is None else env
    for value in (flag, env.get(MODE_ENV), (config_data or {}).get("permissions")):
        if value is not None and not isinstance(value, str):
            raise PermissionModeError(f"agent-tui: permissions must be a string, not {value!r}")
        mode = parse_mode(value)
        if mode is not None:
            return mode
    return default


def mode_from_config(flag: str | None, config: Config, *, default: PermissionMode) -> PermissionMode:
    """:func:`resolve_mode` with the config file's ``permissions`` as :func:`agent_tui.config.load_config`
    read it (the file is not read again)."""
    data = {} if config.permissions is None else {"permissions": config.permissions}
    return resolve_mode(flag, default=default, config_data=data)


def inside(path: str, cwd: str) -> bool:
    """Whether the real ``path`` is ``cwd`` or under it (both resolved through symlinks)."""
    root = os.path.realpath(cwd)
    try:
        return os.path.commonpath([os.path.realpath(path), root]) == root
    except ValueError:  # different drives (Windows)
        return False


def is_git_file(target: str, cwd: str) -> bool:
    """Whether ``target`` (a real path) is git's own: under a ``.git`` folder, or a git config file."""
    parts = Path(target).parts
    root = os.path.realpath(cwd)
    if inside(target, root):
        parts = Path(os.path.relpath(target, root)).parts  # the user may well work inside a .git folder
    return any(p.lower() == ".git" for p in parts) or (bool(parts) and parts[-1].lower() in GIT_FILES)


def user_places(env: Mapping[str, str] | None = None) -> list[str]:
    """The user's files and folders that decide what agent-tui (or git) runs or allows, as real
    paths: Claude Code's (``~/.claude``, ``~/.claude.json``), pi's (``~/.pi``, ``PI_CODING_AGENT_DIR``),
    ``~/.agents``, git's (``~/.gitconfig``, ``~/.config/git``), agent-tui's config file and config
    dir, and its data dir (``trust.json``: which folders and files the user accepted)."""
    from agent_tui.config import config_path
    from agent_tui.store.paths import data_home

    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    places = [home / n for n in (".claude", ".claude.json", ".pi", ".agents", ".gitconfig", ".config/git")]
    if env.get("XDG_CONFIG_HOME"):
        places.append(Path(env["XDG_CONFIG_HOME"]) / "git")
    if env.get("PI_CODING_AGENT_DIR"):
        places.append(Path(env["PI_CODING_AGENT_DIR"]).expanduser())
    config = config_path(env)
    from platformdirs import user_config_dir

    places += [config, Path(user_config_dir("agent-tui", appauthor=False)), data_home()]
    return [os.path.realpath(p) for p in places]


def _data_home() -> Path:
    from agent_tui.store.paths import data_home

    return data_home()


def _under(path: str, folder: str) -> bool:
    path, folder = os.path.normcase(path).casefold(), os.path.normcase(folder).casefold()
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def config_file(path: str, cwd: str, places: list[str] | None = None) -> str | None:
    """How to name ``path`` (a real or lexical absolute path) when it is a file that decides what
    agent-tui or git runs or allows (see :data:`GUARDED_DIRS`, :data:`GUARDED_NAMES`,
    :func:`user_places`); None when it is not one. Case-blind; started inside ``~/.claude`` or
    ``~/.pi``, their files still count."""
    root = os.path.realpath(cwd)
    parts = Path(path).parts
    for base in (root, os.path.abspath(cwd)):
        if _under(path, base):  # the user may well work inside a .git folder
            parts = Path(os.path.relpath(path, base)).parts
            break
    folded = [p.casefold() for p in parts if p not in (".", os.sep)]
    hit = any(p in GUARDED_DIRS for p in folded) or (bool(folded) and folded[-1] in GUARDED_NAMES)
    if not hit:
        # (the data dir only when the user does not work inside it: a test's or a sandbox's home)
        data = os.path.realpath(_data_home())
        hit = any(
            _under(path, place) and (place != data or not _under(root, place))
            for place in places or user_places()
        )
    if not hit:
        return None
    if _under(path, root):
        return os.path.relpath(path, root)
    home = os.path.realpath(Path.home())
    return "~" + path[len(home) :] if _under(path, home) else path


def file_concern(
    target: str, cwd: str, links: int, mode: PermissionMode, lexical: str | None = None
) -> str | None:
    """Why writing the real path ``target`` (a file with ``links`` names; ``lexical``: the path as
    named, before symlinks) needs the user; None: it does not."""
    if not inside(target, cwd):
        return "outside the working directory"
    if is_git_file(target, cwd):
        return "of git's own (it decides what git runs)"
    named = config_file(target, cwd) or (config_file(lexical, cwd) if lexical else None)
    if named is not None:
        return f"that decides what agent-tui runs or allows ({named})"
    if links > 1:  # a hard link: another of its names may be outside
        return f"with {links} hard links (another name may be outside the working directory)"
    if mode is PermissionMode.READ_ONLY:
        return "in read-only mode"
    return None


def _link_count(target: str) -> int:
    try:
        st = os.lstat(target)
    except OSError:
        return 1  # a new file
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 1


def cwd_notice(session_cwd: str, cwd: str) -> str | None:
    """One line when a session was started elsewhere than the process's cwd (None when they agree)."""
    if not session_cwd or os.path.realpath(session_cwd) == os.path.realpath(cwd):
        return None
    shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in session_cwd)
    return (
        f"this session was started in {shown}; tools run in {cwd} (where agent-tui was started), "
        "and writes outside it ask first"
    )


def real_target(path: str, cwd: str) -> str:
    """Where a tool's ``path`` argument really points: resolved as the tools do, then through symlinks."""
    return os.path.realpath(resolve_path(path, cwd))


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    text = redact_text(text)[0]
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 3] + "..."


def scope_covers(scope: str, key: str) -> bool:
    """Whether an allow-session ``scope`` covers the call whose exact scope is ``key``: only the same
    string (a ``*`` in a command the model wrote is a character, not a pattern)."""
    return scope == key


@dataclass
class Permissions:
    """The policy of one process: a mode, an approver, and the scopes allowed for the session."""

    mode: PermissionMode = PermissionMode.ASK
    approver: Approver | None = None
    #: Why no one can be asked (e.g. print mode without a terminal): the denial says so.
    no_approver_reason: str = "no one is there to answer"
    allowed_scopes: set[str] = field(default_factory=set)
    #: Tools that only read by their own account and the user's leave (MCP tools marked
    #: ``readOnlyHint`` with ``[mcp] trust_read_only_hints = true``): never asked, as ``read``.
    trusted_tools: set[str] = field(default_factory=set)
    #: Where commands run (``agent.sandbox``; None: unsandboxed, as with ``--sandbox off``). When a
    #: sandbox was wanted and cannot run here, every command asks.
    sandbox: Sandbox | None = None
    #: The persistent permission rules (``agent.permission_rules``; None: none are read).
    rules: PermissionRules | None = None

    def request_for(
        self, tool: str, arguments: Mapping[str, Any], cwd: str, call_id: str = ""
    ) -> PermissionRequest | None:
        """The request a call would make, or None when nothing but the mode may gate it (reads; a
        write inside cwd, which :meth:`check` asks about in ``ask`` mode)."""
        if tool in READ_TOOLS or tool in self.trusted_tools:
            return None
        if tool in FILE_TOOLS:
            raw = str(arguments.get(_path_argument(tool), ""))
            target = real_target(raw, cwd)
            lexical = os.path.normpath(resolve_path(raw, cwd))
            links = _link_count(target)
            where = file_concern(target, cwd, links, self.mode, lexical)
            if where is None:
                return None
            named = config_file(target, cwd) or config_file(lexical, cwd)
            request = self.describe(tool, arguments, cwd, call_id)
            reason = f"{'writes' if tool == 'write' else 'edits'} a file {where}"
            if named is not None and "agent-tui runs" not in where and "git's own" not in where:
                reason += f"; it decides what agent-tui runs or allows ({named})"
            return replace(
                request,
                reason=reason,
                protected=is_git_file(target, cwd) or links > 1 or named is not None,
                config_file=named,
            )
        request = self.describe(tool, arguments, cwd, call_id)
        if tool == "bash":
            named = command_config_file(str(arguments.get("command", "")), cwd)
            if named is not None:
                return replace(
                    request,
                    reason=f"{request.reason} that may change {named} (it decides what agent-tui runs or allows)",
                    protected=True,
                    config_file=named,
                )
        return request

    @staticmethod
    def describe(tool: str, arguments: Mapping[str, Any], cwd: str, call_id: str = "") -> PermissionRequest:
        """The question a call would make, whether or not it needs one (a hook's ``ask`` asks about
        reads and writes inside the working directory too)."""
        if tool in FILE_TOOLS:
            raw = str(arguments.get(_path_argument(tool), ""))
            target = real_target(raw, cwd)
            shown = raw if os.path.normpath(resolve_path(raw, cwd)) == target else f"{raw} -> {target}"
            return PermissionRequest(
                tool,
                call_id,
                arguments,
                _one_line(shown),
                f"{'writes' if tool == 'write' else 'edits'} a file",
                f"file:{target}",
                cwd,
                target,
            )
        if tool == "bash":
            command = str(arguments.get("command", ""))
            scope = "bash:" + redact_text(command)[0]  # whole, never shortened: it is what is recorded
            return PermissionRequest(
                tool,
                call_id,
                arguments,
                _one_line(command),
                "runs a shell command",
                scope,
                cwd,
                key="bash:" + command,  # exactly this command, byte for byte, is what is allowed
            )
        if tool == "web_fetch":  # asked per host; "always allow" keeps WebFetch(domain:HOST)
            from agent_tui.agent.tools.web_fetch import request_fields

            fetch = request_fields(arguments)
            return PermissionRequest(
                tool,
                call_id,
                arguments,
                _one_line(fetch["summary"]),
                fetch["reason"],
                redact_text(fetch["scope"])[0],
                cwd,
                key=fetch["scope"],
                rule=fetch["rule"],
            )
        summary = _one_line(_arguments_text(arguments))
        if tool in READ_TOOLS:
            reason = "reads files"
        elif tool.startswith("mcp__"):
            reason = "calls an MCP server's tool"
        else:
            reason = "may change things"
        return PermissionRequest(tool, call_id, arguments, summary, reason, f"tool:{tool}", cwd)

    def write_guard(self, cwd: str, approved: str | None = None) -> WriteGuard:
        """What the write and edit tools ask once the file is open (see ``tools.safe_open``): the real
        path and link count of what they are about to write must still pass, or be ``approved``
        (the real path this call was allowed for), or be allowed for the session."""

        def guard(target: str, links: int) -> str | None:
            if (
                self.mode is PermissionMode.AUTO
                or target == approved
                or f"file:{target}" in self.allowed_scopes
            ):
                return None
            concern = file_concern(target, cwd, links, self.mode)
            if concern is None:
                return None
            return (
                f"Refused: the file to write is {target}, a file {concern}, which is not what was checked "
                "(a symlink or a link changed in between); nothing was written."
            )

        return guard

    def remember(self, scope: str) -> None:
        self.allowed_scopes.add(scope)

    async def check(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        cwd: str,
        call_id: str = "",
        hook: HookVote | None = None,
        info: Tool | None = None,
    ) -> Verdict:
        """Decide one call: asks the approver in ``ask`` mode (unless an allow-session scope covers
        it); ``hook``: what PreToolUse hooks voted (see the module doc); ``info``: the tool (its
        ``file_effect`` decides ``plan`` and ``accept-edits``; None: known by name only)."""
        request = self.request_for(tool, arguments, cwd, call_id)
        effect = info.file_effect if info is not None else _effect_by_name(tool)
        if (
            request is None
            and effect != "none"
            and tool not in self.trusted_tools
            and self.mode is not PermissionMode.AUTO
        ):  # a write or edit inside the working directory: ask mode asks, accept-edits lets it pass
            request = self.describe(tool, arguments, cwd, call_id)
        ruling = self._ruling(tool, arguments, cwd, info)
        if ruling is not None and ruling.kind == "deny":
            return Verdict(
                False,
                "rule-deny",
                request or self.describe(tool, arguments, cwd, call_id),
                f'Refused by the permission rule {ruling.rule} (deny, in {ruling.source}): "{tool}" '
                "cannot run this call. Do not retry it; do something else or ask the user.",
                rule=ruling.rule,
                source=ruling.source,
            )
        if self.mode is PermissionMode.PLAN and effect != "none":
            return Verdict(
                False,
                "plan-refused",
                request or self.describe(tool, arguments, cwd, call_id),
                f'Refused: agent-tui is in plan mode, so the "{tool}" tool cannot run. In plan mode '
                "nothing changes files or runs commands: investigate with the tools that only read, "
                "then present your plan; the user approves it and chooses how the work goes on.",
            )
        if (
            self.mode is PermissionMode.ACCEPT_EDITS
            and request is not None
            and (hook is None or hook.decision != "ask")
            and (ruling is None or ruling.kind != "ask")
            and (inside := _edit_inside(tool, info, arguments, cwd)) is not None
            and request.path in (None, inside)
        ):  # the real path the request names (and the write guard lets through), not one a
            # symlink flipped to between the two looks: that is asked
            return Verdict(True, "accept-edits", request)
        if self.mode is PermissionMode.READ_ONLY and request is not None:
            return Verdict(
                False,
                "read-only-refused",
                request,
                f'Refused: agent-tui is in read-only mode, so the "{tool}" tool cannot run ({request.summary}). '
                "Writes, edits and shell commands are refused; read, ls, grep and find still work. "
                "Ask the user to switch modes if a change is needed.",
            )
        if ruling is not None and ruling.kind == "ask":  # as Claude Code: even in auto mode
            asked = self._with_rule(request or self.describe(tool, arguments, cwd, call_id), info)
            reason = f"{asked.reason}; the permission rule {ruling.rule} ({ruling.source}) asks"
            verdict = await self._ask(replace(asked, reason=reason))
            if verdict.rule is None:  # (allow-always names the rule it kept)
                verdict = replace(verdict, rule=ruling.rule, source=ruling.source)
            return verdict
        if hook is not None and hook.decision == "ask":
            asked = self._with_rule(request or self.describe(tool, arguments, cwd, call_id), info)
            why = f": {hook.reason}" if hook.reason else ""
            return await self._ask(
                replace(asked, reason=f"{asked.reason}; a PreToolUse hook asks{why}"), "ask"
            )
        if request is None:
            return Verdict(True, None)
        unsandboxed = self.sandbox.unsandboxed if self.sandbox is not None else None
        if unsandboxed and (info.acp_kind if info is not None else tool_facts(tool).acp_kind) == "execute":
            # a sandbox was wanted and bwrap cannot run: every command asks, whatever allows it
            return await self._ask(replace(request, reason=f"{request.reason}; {unsandboxed}"))
        if self.mode is PermissionMode.AUTO:
            notice = None
            if request.config_file is not None:
                what = "changed" if tool in FILE_TOOLS else "ran a command that may change"
                notice = (
                    f"the model {what} {request.config_file} (it decides what agent-tui runs or allows: "
                    "a change to its hooks or MCP servers loads only once you accept it)"
                )
            return Verdict(True, "auto", request, notice=notice)
        if (
            ruling is not None
            and ruling.kind == "allow"
            and not request.protected
            and request.config_file is None
        ):
            return Verdict(True, "rule-allow", request, rule=ruling.rule, source=ruling.source)
        if request.exact in self.allowed_scopes and request.config_file is None:
            return Verdict(True, "allow-session", request, remembered=True)
        if hook is not None and hook.decision == "allow" and not request.protected:
            return Verdict(True, "hook-allow", request, hook="allow")
        return await self._ask(self._with_rule(request, info))

    def _ruling(self, tool: str, arguments: Mapping[str, Any], cwd: str, info: Tool | None) -> Ruling | None:
        """What the permission rules say about the call (None: no rule decides it). A ``>`` in a
        command passes without a rule where a ``write`` of that file would."""
        if self.rules is None:
            return None

        def write_ok(real: str) -> bool:
            return file_concern(real, cwd, _link_count(real), self.mode) is None

        return self.rules.decide(tool, arguments, cwd, info, write_ok)

    def _with_rule(self, request: PermissionRequest, info: Tool | None) -> PermissionRequest:
        """The request with the rule "always allow" would keep (None for a call no rule may allow:
        a file that decides what agent-tui or git runs, a protected call)."""
        if request.rule is not None or request.protected or request.config_file is not None:
            return request
        from agent_tui.agent.permission_rules import suggest

        return replace(request, rule=suggest(request.tool, request.arguments, request.cwd, info))

    async def _ask(self, request: PermissionRequest, hook: str | None = None) -> Verdict:
        tool = request.tool
        if self.approver is None:
            return Verdict(
                False,
                "deny",
                request,
                f'Permission denied: "{tool}" ({request.summary}) needs the user\'s confirmation and '
                f"{self.no_approver_reason}. Do not retry it.",
                hook=hook,
            )
        try:
            decision = Decision(await self.approver(request))
        except Exception as e:  # the face could not ask (an editor's error, a lost connection)
            why = " ".join(str(e).split())[:SUMMARY_LIMIT] or type(e).__name__
            return Verdict(
                False,
                "deny",
                request,
                f'Permission denied: "{tool}" ({request.summary}) needs the user\'s confirmation and '
                f"the question could not be put ({redact_text(why)[0]}). Do not retry it.",
                hook=hook,
            )
        if decision is Decision.DENY:
            return Verdict(
                False,
                "deny",
                request,
                f'Permission denied: the user did not allow "{tool}" ({request.summary}). '
                "Do not retry the same call; ask the user or do something else.",
                hook=hook,
            )
        if decision is Decision.ALLOW_SESSION and request.config_file is not None:
            decision = Decision.ALLOW_ONCE  # such a file is asked about every time
        if decision is Decision.ALLOW_SESSION:
            self.remember(request.exact)
        if decision is Decision.ALLOW_ALWAYS:
            return self._keep(request, hook)
        return Verdict(True, decision.value, request, hook=hook)

    def _keep(self, request: PermissionRequest, hook: str | None) -> Verdict:
        """ "Always allow": the rule the question showed goes into ``.claude/settings.local.json``
        and applies at once; a call no rule may allow (or a file that cannot be written) is
        allowed once, and the notice says why."""
        from agent_tui.agent.permission_rules import PermissionRules, RuleError

        if request.rule is None or request.protected or request.config_file is not None:
            return Verdict(
                True,
                Decision.ALLOW_ONCE.value,
                request,
                hook=hook,
                notice="allowed once: no permission rule can allow this call",
            )
        if self.rules is None:
            self.rules = PermissionRules(request.cwd)
        try:
            source = self.rules.keep(request.rule)
        except (OSError, RuleError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            return Verdict(
                True,
                Decision.ALLOW_ONCE.value,
                request,
                hook=hook,
                notice=f"allowed once: the rule {request.rule} could not be kept ({why})",
            )
        return Verdict(
            True, Decision.ALLOW_ALWAYS.value, request, hook=hook, rule=request.rule, source=source
        )


def _edit_inside(tool: str, info: Tool | None, arguments: Mapping[str, Any], cwd: str) -> str | None:
    """Whether a tool that changes only the file it names (``file_effect == "path"``) names one
    inside ``cwd`` that no other rule guards (git's, agent-tui's config, a hard link): what
    ``accept-edits`` lets pass (``ask`` mode asks about it): its real path, or None."""
    if info is None:  # known by name only: its row in the tool facts table
        argument = _path_argument(tool) if _effect_by_name(tool) == "path" else None
    else:
        argument = info.path_argument if info.file_effect == "path" else None
    if not argument:
        return None
    raw = arguments.get(argument)
    if not isinstance(raw, str) or not raw:
        return None
    target = real_target(raw, cwd)
    lexical = os.path.normpath(resolve_path(raw, cwd))
    if file_concern(target, cwd, _link_count(target), PermissionMode.ACCEPT_EDITS, lexical) is not None:
        return None
    return target


def _path_argument(tool: str) -> str:
    """The argument naming the file of a tool in FILE_TOOLS."""
    return tool_facts(tool).path_argument or "path"


def _effect_by_name(tool: str) -> FileEffect:
    """What a tool known only by its name may do to files (the built-in ones; any other: anything)."""
    if tool in READ_TOOLS:
        return "none"
    return "path" if tool in FILE_TOOLS else "any"


_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "{", "}", "!", "|&", ";;", "\n"})


def command_config_file(command: str, cwd: str) -> str | None:
    """The first file that decides what agent-tui runs or allows which ``command`` names and may
    change (a redirection, ``tee``, ``cp``, ``mv``, ``sed -i``, ``ln``, an interpreter...: any
    command but a few that only read), shown as :func:`config_file` shows it; None when none.

    What it sees is the words as written: ``~``, ``$HOME`` and ``${HOME}`` are expanded, relative
    paths taken from ``cwd``, symlinks resolved. A name a shell builds at run time (``$(printf
    ...)``, a variable, a glob such as ``.mc?.json``, a script that writes it) is not seen: the
    trust store (``agent.trust``) is what keeps such a change from loading unconfirmed."""
    import shlex

    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:  # an open quote: the words as split by spaces
        words = command.split()
    home = str(Path.home())
    places = user_places()
    git = _git_config_file(command, cwd, home)  # sets what git runs next (core.hooksPath, an alias)
    if git is not None and (shown := config_file(git, cwd, places)) is not None:
        return shown
    writes = ">" in command
    first = True
    named: str | None = None
    for word in words:
        if word in _OPERATORS or (word and set(word) <= set(";&|()")):
            first = True
            continue
        if first:
            first = False
            if "=" in word and not word.startswith(("=", "/", ".")):
                first = True  # VAR=value before the command
                continue
            if os.path.basename(word) not in READ_COMMANDS:
                writes = True
        for candidate in (word, word.partition("=")[2]):
            candidate = candidate.lstrip("<>&0123456789") if candidate[:1] in "<>0123456789" else candidate
            if not candidate or named is not None:
                continue
            if candidate.startswith("~"):
                candidate = home + candidate[1:]
            for var in ("${HOME}", "$HOME"):
                candidate = candidate.replace(var, home)
            lexical = os.path.normpath(os.path.join(cwd, candidate))
            named = config_file(lexical, cwd, places) or config_file(os.path.realpath(lexical), cwd, places)
    return named if writes else None


#: ``git config`` options and subcommands that only read (``git config user.name`` reads too).
_GIT_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list"}
    | {"get", "list"}
)
#: ``git config`` options and subcommands that write, whatever follows.
_GIT_CONFIG_WRITES = frozenset(
    {
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--edit",
        "-e",
        "--rename-section",
        "--remove-section",
    }
    | {"set", "unset", "edit", "rename-section", "remove-section"}
)
#: Options (of ``git``, of ``git config``) that take the next word.
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
_GIT_CONFIG_OPTIONS_WITH_VALUE = frozenset({"--file", "-f", "--type", "--blob", "--default", "--comment"})


def _git_config_file(command: str, cwd: str, home: str) -> str | None:
    """The file a ``git config`` that sets something writes (``core.hooksPath``, ``core.pager``,
    an alias: what git runs next), as an absolute path; None for any other command, or one that
    only reads. The repository's ``.git/config``, ``~/.gitconfig`` with ``--global``, or
    ``--file F``. Every simple command the line runs is looked at, as the shell parser finds them
    (``sudo git config``, ``bash -c '...'``, ``$(...)`` included); a word built at run time is ""."""
    from agent_tui.agent.shell_parse import analyze

    for run in analyze(command).runs:
        simple = [w or "" for w in run.words]
        if not simple or os.path.basename(simple[0]) != "git":
            continue
        rest, i, base = simple[1:], 0, cwd
        while i < len(rest) and rest[i].startswith("-"):  # git's own options
            if rest[i] == "-C" and i + 1 < len(rest):
                base = os.path.join(base, rest[i + 1])
            i += 2 if rest[i] in _GIT_OPTIONS_WITH_VALUE else 1
        if rest[i : i + 1] != ["config"]:
            continue
        args, file, positional = rest[i + 1 :], None, []
        n = 0
        while n < len(args):
            a = args[n]
            if a in _GIT_CONFIG_OPTIONS_WITH_VALUE and n + 1 < len(args):
                file = args[n + 1] if a in ("--file", "-f") else file
                n += 2
                continue
            if a.startswith("--file="):
                file = a.partition("=")[2]
            elif not a.startswith("-"):
                positional.append(a)
            n += 1
        first = positional[:1] + [a for a in args if a.startswith("-")]
        if any(a in _GIT_CONFIG_READS for a in first):
            continue
        if len(positional) >= 2 or any(a in _GIT_CONFIG_WRITES for a in first):
            if "--global" in args:
                return os.path.join(home, ".gitconfig")
            if file is not None:
                return os.path.normpath(os.path.join(base, os.path.expanduser(file)))
            return os.path.normpath(os.path.join(base, ".git", "config"))
    return None


def _arguments_text(arguments: Mapping[str, Any], indent: int | None = None) -> str:
    import json

    try:
        return json.dumps(dict(arguments), ensure_ascii=False, default=str, indent=indent)
    except (TypeError, ValueError):
        return str(arguments)


__all__ = [
    "FILE_TOOLS",
    "GIT_FILES",
    "GUARDED_DIRS",
    "GUARDED_NAMES",
    "MODE_ENV",
    "READ_TOOLS",
    "RECORDED_DECISIONS",
    "RECORD_TYPE",
    "Approver",
    "Decision",
    "HookVote",
    "PermissionMode",
    "PermissionModeError",
    "PermissionRequest",
    "Permissions",
    "Verdict",
    "command_config_file",
    "config_file",
    "cwd_notice",
    "file_concern",
    "inside",
    "is_git_file",
    "mode_from_config",
    "parse_mode",
    "real_target",
    "resolve_mode",
    "scope_covers",
    "user_places",
]
