"""Every key of the config file, as one typed tree: :class:`ConfigFile` and the tables under it.

The tree is the one description of the file: :func:`check` reads a parsed file through it (an
unknown key, or a value of the wrong type, is one line naming the key and the file, and only that
key is left out: the rest of the file still applies); the README's reference section and
``docs/config.schema.json`` are generated from it (``scripts/config-reference``), and a test keeps
them equal. Each field's ``Meta(description=...)`` is what the README and the JSON Schema say of it.

Some tables are also read, entry by entry, by parsers they share with other programs' files (MCP
servers with ``.mcp.json``, hooks and permission rules with Claude Code's ``settings.json``); those
read each entry through a struct of their own (:func:`convert`, :func:`convert_fields`,
:func:`read_json_file` below) and say what is wrong with a value themselves (a server "skipped", a
rule "ignored"), so here only an unknown key under them is a problem (:data:`SELF_CHECKED`).
"""

from __future__ import annotations

import json
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import Meta

from agent_tui.projection import registry
from agent_tui.projection.compaction import CompactionSettings

_COMPACTION = CompactionSettings()

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
#: The levels a ``thinking_level_map`` may map (``max`` too: pi's top level).
MappedLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["one-at-a-time", "all"]
SandboxMode = Literal["workspace-write", "read-only", "off"]
Count = Annotated[int, Meta(ge=0)]
Dollars = Annotated[float, Meta(ge=0)]

#: Values kept in :mod:`agent_tui.tui.keymap` and :mod:`agent_tui.agent.permissions` (layers above
#: this one); the JSON Schema lists them and tests/unit/test_config_schema.py keeps them equal.
KEYMAPS = ("default", "pi")
PERMISSION_MODES = ("ask", "accept-edits", "plan", "auto", "read-only")


class _Table(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A TOML table: every key known (an unknown one is reported by :func:`check`)."""


class ProviderSection(_Table, frozen=True):
    """A provider's own settings; the environment's variables win over them."""

    api_key: Annotated[
        str | None,
        Meta(description="The API key (the provider's key variable, e.g. ANTHROPIC_API_KEY, wins over it)."),
    ] = None
    base_url: Annotated[
        str | None,
        Meta(
            description="The server's base URL: a local or compatible server needs no key (OPENAI_BASE_URL... win)."
        ),
    ] = None
    model: Annotated[str | None, Meta(description="The default model of this provider.")] = None
    api: Annotated[
        str | None,
        Meta(
            description='The API to call it through ("responses" or "chat" for openai and azure; --api wins).'
        ),
    ] = None


class Cost(_Table, frozen=True):
    """A price of your own, in dollars per million tokens, key by key over the built-in price."""

    input: Annotated[Dollars | None, Meta(description="Input tokens.")] = None
    output: Annotated[Dollars | None, Meta(description="Output tokens.")] = None
    cache_read: Annotated[Dollars | None, Meta(description="Tokens read from the prompt cache.")] = None
    cache_write: Annotated[Dollars | None, Meta(description="Tokens written to the prompt cache.")] = None
    cacheRead: Annotated[Dollars | None, Meta(description="pi's spelling of cache_read.")] = None
    cacheWrite: Annotated[Dollars | None, Meta(description="pi's spelling of cache_write.")] = None


class ModelEntry(_Table, frozen=True):
    """A model the built-in table does not know, or a built-in one changed key by key."""

    provider: Annotated[
        str | None, Meta(description="Its provider (default: the built-in entry's, else openai).")
    ] = None
    context_window: Annotated[
        Count | None, Meta(description="Its context window, in tokens (default 128000).")
    ] = None
    max_output: Annotated[
        Count | None, Meta(description="Its most output tokens per call (default 8192).")
    ] = None
    reasoning: Annotated[bool | None, Meta(description="A reasoning model: thinking levels apply to it.")] = (
        None
    )
    images: Annotated[bool | None, Meta(description="It reads images.")] = None
    thinking_level_map: Annotated[
        dict[MappedLevel, str | bool] | None,
        Meta(
            description="What is sent for each thinking level (pi's thinkingLevelMap); false: not supported."
        ),
    ] = None
    supports_reasoning_effort: Annotated[
        bool | None,
        Meta(description="false: never send reasoning_effort (pi's compat.supportsReasoningEffort)."),
    ] = None
    api: Annotated[str | None, Meta(description='The API it is called through ("responses", "chat").')] = None
    cost: Annotated[
        Cost | None, Meta(description="Its price ($ per million tokens): the status line's cost.")
    ] = None


class CompactionModel(_Table, frozen=True):
    """`[compaction]` settings for one model, over the table's."""

    enabled: Annotated[bool | None, Meta(description="Compact when the context fills up.")] = None
    reserve_tokens: Annotated[Count | None, Meta(description="Tokens kept free for the reply.")] = None
    keep_recent_tokens: Annotated[Count | None, Meta(description="Recent tokens kept as they are.")] = None
    prune_before_summarizing: Annotated[
        bool | None, Meta(description="Drop old tool results before summarizing.")
    ] = None


class CompactionTable(_Table, frozen=True):
    """When and how the conversation is compacted (see Compaction)."""

    enabled: Annotated[bool, Meta(description="Compact when the context fills up.")] = _COMPACTION.enabled
    reserve_tokens: Annotated[int, Meta(ge=0, description="Tokens kept free for the reply.")] = (
        _COMPACTION.reserve_tokens
    )
    keep_recent_tokens: Annotated[int, Meta(ge=0, description="Recent tokens kept as they are.")] = (
        _COMPACTION.keep_recent_tokens
    )
    prune_before_summarizing: Annotated[
        bool, Meta(description="Drop old tool results before summarizing.")
    ] = _COMPACTION.prune_before_summarizing
    summarize_branches: Annotated[
        bool,
        Meta(
            description='The "Summarize branch?" question\'s default: Summarize (false: No summary, as pi).'
        ),
    ] = False
    models: Annotated[
        dict[str, CompactionModel], Meta(description="Settings for one model id, over these.")
    ] = msgspec.field(default_factory=dict)


class BranchSummaryTable(_Table, frozen=True):
    """The question a move in the tree asks when it leaves messages behind (pi's branchSummary)."""

    skip_prompt: Annotated[
        bool,
        Meta(
            description="Move without asking, as the question's default would (pi's branchSummary.skipPrompt)."
        ),
    ] = False


class SandboxTable(_Table, frozen=True):
    """Where bash, !cmd and hooks run (docs/SANDBOX.md)."""

    mode: Annotated[
        SandboxMode | None,
        Meta(
            description="workspace-write (the default), read-only or off; --sandbox and AGENT_TUI_SANDBOX win."
        ),
    ] = None
    network: Annotated[
        bool | None, Meta(description="true: sandboxed commands reach the network (--sandbox-network).")
    ] = None


class RetryTable(_Table, frozen=True):
    """Retries of a failed request (429, 5xx, overloaded, dropped streams)."""

    max_retries: Annotated[int, Meta(ge=0, description="Retries after the first attempt.")] = 3
    base_delay: Annotated[
        float,
        Meta(
            ge=0, description="Seconds before the first retry, doubled each time (retry-after is honoured)."
        ),
    ] = 2.0
    max_delay: Annotated[float, Meta(ge=0, description="The longest wait between attempts, in seconds.")] = (
        60.0
    )


class ToolsTable(_Table, frozen=True):
    """Opt-in tools."""

    context: Annotated[
        bool, Meta(description="The model gets the context tool (list, hide, restore its own tool results).")
    ] = False


class McpServer(_Table, frozen=True):
    """One MCP server: a command (stdio) or a url (streamable HTTP, or SSE with type = "sse")."""

    type: Annotated[
        Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None,
        Meta(
            description='The transport; "sse": the legacy SSE transport (default: stdio for a command, else HTTP).'
        ),
    ] = None
    command: Annotated[str | None, Meta(description="The program of a stdio server (${VAR} expanded).")] = (
        None
    )
    args: Annotated[list[str | int | float], Meta(description="Its arguments (numbers as strings).")] = (
        msgspec.field(default_factory=list)
    )
    env: Annotated[
        dict[str, str | int | float | bool],
        Meta(description="Its environment variables (secrets: never shown)."),
    ] = msgspec.field(default_factory=dict)
    cwd: Annotated[str | None, Meta(description="Its working directory.")] = None
    url: Annotated[str | None, Meta(description="The URL of an HTTP or SSE server.")] = None
    headers: Annotated[
        dict[str, str | int | float | bool], Meta(description="HTTP headers (secrets: never shown).")
    ] = msgspec.field(default_factory=dict)
    startup: Annotated[
        Literal["lazy", "eager"], Meta(description='"lazy": at the first turn; "eager": when the app starts.')
    ] = "lazy"
    timeout: Annotated[float, Meta(description="Seconds per request.")] = 60.0
    startup_timeout: Annotated[float, Meta(description="Seconds to start and answer initialize.")] = 30.0
    enabled: Annotated[bool | None, Meta(description="false: configured but not started.")] = None
    disabled: Annotated[
        bool | None, Meta(description="true: configured but not started (Claude Code's spelling).")
    ] = None


class McpTable(_Table, frozen=True):
    """MCP servers (see MCP servers)."""

    servers: Annotated[dict[str, McpServer], Meta(description="The servers, by name.")] = msgspec.field(
        default_factory=dict
    )
    wait: Annotated[float, Meta(description="Seconds a turn waits for servers still starting.")] = 10.0
    trust_read_only_hints: Annotated[
        bool, Meta(description="true: ask mode runs tools a server marks readOnlyHint without asking.")
    ] = False


class Hook(_Table, frozen=True):
    """One hook command (Claude Code's format)."""

    type: Annotated[str, Meta(description='Only "command" hooks run.')] = "command"
    command: Annotated[
        str | None, Meta(description="Run by the shell in the session's folder, the event as JSON on stdin.")
    ] = None
    timeout: Annotated[float, Meta(description="Seconds; a hook still running is killed.")] = 60.0


class HookGroup(_Table, frozen=True):
    """The hooks of one event for the tools a matcher names."""

    matcher: Annotated[str, Meta(description='A tool name, "a|b", a regex, or "" / "*" for every tool.')] = ""
    hooks: Annotated[list[Hook], Meta(description="The commands.")] = msgspec.field(default_factory=list)


class PermissionsTable(_Table, frozen=True):
    """The permission mode and rules (see Permissions)."""

    mode: Annotated[
        str | None,
        Meta(
            description="ask, accept-edits, plan, auto or read-only.",
            extra_json_schema={"enum": list(PERMISSION_MODES)},
        ),
    ] = None
    allow: Annotated[
        list[str], Meta(description='Rules that allow a call without asking ("Bash(git diff:*)").')
    ] = msgspec.field(default_factory=list)
    ask: Annotated[list[str], Meta(description="Rules that always ask.")] = msgspec.field(
        default_factory=list
    )
    deny: Annotated[list[str], Meta(description="Rules that refuse a call.")] = msgspec.field(
        default_factory=list
    )


class _Settings(_Table, frozen=True):
    """agent-tui's config file (`~/.config/agent-tui/config.toml`; `AGENT_TUI_CONFIG` moves it)."""

    provider: Annotated[
        str | None,
        Meta(
            description="The default provider (--provider wins).",
            extra_json_schema={"enum": list(registry.NAMES)},
        ),
    ] = None
    model: Annotated[str | None, Meta(description="Its default model (--model wins).")] = None
    thinking: Annotated[
        ThinkingLevel | None,
        Meta(description="The thinking level (Anthropic thinking, OpenAI reasoning_effort)."),
    ] = None
    timeout: Annotated[
        float | None, Meta(description="Seconds without a byte from the server before a request fails.")
    ] = None
    permissions: Annotated[
        str | PermissionsTable | None,
        Meta(description='The tool policy ("ask", ...), or a [permissions] table of mode and rules.'),
    ] = None
    steering_mode: Annotated[
        QueueMode,
        Meta(description="Messages typed while the agent works: one per model call, or all at once."),
    ] = "one-at-a-time"
    follow_up_mode: Annotated[
        QueueMode, Meta(description="Alt+Enter follow-ups: one per turn, or all at once.")
    ] = "one-at-a-time"
    theme: Annotated[str | None, Meta(description="The app's theme (/theme saves it here).")] = None
    ascii_symbols: Annotated[bool, Meta(description="true: ASCII marks for fonts without ⑂ ◀ ⋯ ⚿ ⧉.")] = False
    tree_pane: Annotated[
        bool, Meta(description="Show the session tree beside the chat when it fits (saved by the app).")
    ] = True
    panel_pane: Annotated[
        bool, Meta(description="Show the context panel beside the chat when it fits (saved by the app).")
    ] = True
    keymap: Annotated[
        str, Meta(description='"pi": start from pi\'s keys.', extra_json_schema={"enum": list(KEYMAPS)})
    ] = "default"
    keys: Annotated[
        dict[str, str],
        Meta(description='Binding id = key ("ctrl+k"; several: "f8,ctrl+k"); ? lists the ids.'),
    ] = msgspec.field(default_factory=dict)
    models: Annotated[dict[str, ModelEntry], Meta(description="Models, by id.")] = msgspec.field(
        default_factory=dict
    )
    compaction: Annotated[CompactionTable, Meta(description="Compaction.")] = msgspec.field(
        default_factory=CompactionTable
    )
    branch_summary: Annotated[
        BranchSummaryTable, Meta(description="Summaries of the branch a move in the tree leaves.")
    ] = msgspec.field(default_factory=BranchSummaryTable)
    sandbox: Annotated[SandboxTable, Meta(description="The command sandbox.")] = msgspec.field(
        default_factory=SandboxTable
    )
    retry: Annotated[RetryTable, Meta(description="Retries.")] = msgspec.field(default_factory=RetryTable)
    tools: Annotated[ToolsTable, Meta(description="Opt-in tools.")] = msgspec.field(
        default_factory=ToolsTable
    )
    mcp: Annotated[McpTable, Meta(description="MCP servers.")] = msgspec.field(default_factory=McpTable)
    hooks: Annotated[
        dict[str, list[HookGroup]],
        Meta(
            description="By event: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, Stop."
        ),
    ] = msgspec.field(default_factory=dict)

    def provider_section(self, name: str) -> ProviderSection:
        """``[name]``: a provider's table (empty when the file has none)."""
        # (the struct's own name tuples: ``msgspec.structs.fields`` evaluates every annotation, 1 ms a call)
        field = dict(zip(self.__struct_encode_fields__, self.__struct_fields__, strict=True)).get(name)
        section = getattr(self, field, None) if field is not None else None
        return section if isinstance(section, ProviderSection) else ProviderSection()

    @property
    def permission_mode(self) -> str | None:
        """``permissions = "..."`` or ``[permissions] mode`` (None: not set)."""
        if isinstance(self.permissions, PermissionsTable):
            return self.permissions.mode
        return self.permissions


#: ``[anthropic]``, ``[openai]``...: one table per registry entry, named as the registry names it
#: (a new provider is its registry entry only; tests/functional/test_provider_registry.py).
_PROVIDER_FIELDS = [
    (
        name.replace("-", "_"),
        Annotated[ProviderSection | None, Meta(description=f"{registry.spec(name).label}'s settings.")],
        msgspec.field(default=None, name=name),
    )
    for name in registry.NAMES
]

if TYPE_CHECKING:
    ConfigFile = _Settings
else:
    ConfigFile = msgspec.defstruct(
        "ConfigFile",
        _PROVIDER_FIELDS,
        bases=(_Settings,),
        module=__name__,
        namespace={"__doc__": _Settings.__doc__},
        frozen=True,
        forbid_unknown_fields=True,
        omit_defaults=True,
    )


#: The top-level keys whose wrong value makes the model unusable as configured: load_config stops
#: with that one line (as it did before the schema); any other problem is a warning.
FATAL = frozenset(
    {"provider", "thinking", "timeout", "permissions", "steering_mode", "follow_up_mode"}
    | {"retry", "compaction", "models", "sandbox"}
)

#: Subtrees whose values the agent's own parsers check and report (see the module doc).
SELF_CHECKED: tuple[tuple[str, ...], ...] = (
    ("mcp", "servers"),
    ("hooks",),
    ("permissions", "allow"),
    ("permissions", "ask"),
    ("permissions", "deny"),
)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in the file: ``line`` says it (naming the key and the file)."""

    path: tuple[str | int, ...]
    line: str
    unknown: bool  # a key the tree does not have (else: a value of the wrong type)

    @property
    def fatal(self) -> bool:
        return not self.unknown and bool(self.path) and self.path[0] in FATAL


@dataclass(frozen=True, slots=True)
class Checked:
    """A file read through the tree: what applies, and a line per problem."""

    settings: ConfigFile
    problems: tuple[Problem, ...] = ()

    @property
    def errors(self) -> list[str]:
        """The problems load_config stops at."""
        return [p.line for p in self.problems if p.fatal]

    @property
    def warnings(self) -> list[str]:
        """The others: the key is left out, the rest of the file applies."""
        return [p.line for p in self.problems if not p.fatal]


EMPTY = Checked(ConfigFile())

_DROP = object()
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _part(name: str | int) -> str:
    return str(name) if _BARE.match(str(name)) else json.dumps(str(name))


def _shown(value: Any) -> str:
    """A value as TOML would write it, short."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:39] + "…"


_KINDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a table",
}


#: The same in a JSON file's words (Claude Code's and pi's files).
_JSON_KINDS = {**_KINDS, "array": "an array", "object": "an object"}


def _expected(tp: Any, message: str, words: Mapping[str, str] = _KINDS) -> str:
    """What a value of ``tp`` must be, in words (from msgspec's ``message`` where it says more)."""
    inner = _strip(tp)
    if typing.get_origin(inner) is Literal:
        return "one of " + ", ".join(_shown(v) for v in typing.get_args(inner))
    match = re.match(r"Expected `([^`]*)`(.*?)(?:, got `[^`]*`)?(?: - at .*)?$", message)
    if match is None:
        return message[:1].lower() + message[1:] if message else "something else"
    kinds = [words.get(k.strip(), k.strip()) for k in match.group(1).split("|") if k.strip() != "null"]
    if "a number" in kinds and "an integer" in kinds:  # int | float: any number
        kinds.remove("an integer")
    return " or ".join(kinds) + match.group(2)


def _strip(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and without ``None`` in a union."""
    if typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _strip(args[0])
    return tp


def _struct_of(tp: Any) -> type[msgspec.Struct] | None:
    inner = _strip(tp)
    if isinstance(inner, type) and issubclass(inner, msgspec.Struct):
        return inner
    if typing.get_origin(inner) in (typing.Union, types.UnionType):
        for arg in typing.get_args(inner):
            if isinstance(arg, type) and issubclass(arg, msgspec.Struct):
                return arg
    return None


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def where(self, table: tuple[str | int, ...], key: tuple[str | int, ...]) -> str:
        """``[retry] max_retries``, ``[[hooks.Stop]] matcher``, ``timeout``."""
        listed = any(isinstance(p, int) for p in table)
        name = ".".join(_part(p) for p in table if not isinstance(p, int))
        head = (f"[[{name}]]" if listed else f"[{name}]") if name else ""
        tail = ".".join(_part(p) for p in key)
        return f"{head} {tail}".strip()

    def value(self, value: Any, tp: Any, table: tuple[str | int, ...], key: tuple[str | int, ...]) -> Any:
        """``value`` checked as ``tp``: what is kept of it, or _DROP (the problem recorded)."""
        struct = _struct_of(tp)
        if struct is not None and isinstance(value, Mapping):
            if not table or not key:  # a table of its own: [retry], [models."id"], [[hooks.Stop]]
                return self.table(value, struct, table + key)
            return self.table(value, struct, table, key)  # an inline table in one: cost = {...}
        inner = _strip(tp)
        origin = typing.get_origin(inner)
        if origin is dict and isinstance(value, Mapping):
            key_tp, value_tp = typing.get_args(inner)
            kept = {}
            for k, v in value.items():
                try:
                    msgspec.convert(k, key_tp)
                except msgspec.ValidationError:
                    line = f"{self.where(table, key)}: the key {_shown(k)} must be {_expected(key_tp, '')}"
                    self.problem(table, (*key, k), line, value=True)
                    continue
                if _struct_of(value_tp) is None:  # an inline table: its keys are the key's
                    got = self.value(v, value_tp, table, (*key, k))
                else:  # a table of tables: [models."id"]
                    got = self.value(v, value_tp, (*table, *key, k), ())
                if got is not _DROP:
                    kept[k] = got
            return kept
        if origin is list and isinstance(value, list) and _struct_of(typing.get_args(inner)[0]) is not None:
            item_tp = typing.get_args(inner)[0]
            items = [self.value(v, item_tp, (*table, *key, i), ()) for i, v in enumerate(value)]
            return [v for v in items if v is not _DROP]
        try:
            return msgspec.to_builtins(msgspec.convert(value, tp))
        except msgspec.ValidationError as e:
            if isinstance(value, str):  # a number written as a string ("600") still reads, as before
                try:
                    got = msgspec.convert(value, tp, strict=False)
                except msgspec.ValidationError:
                    pass
                else:
                    if isinstance(got, int | float) and not isinstance(got, bool):  # "1" is no true
                        return got
            shown = self.where(table, key)
            self.problem(
                table, key, f"{shown} must be {_expected(tp, str(e))}, not {_shown(value)}", value=True
            )
            return _DROP

    def table(
        self,
        data: Mapping[str, Any],
        struct: type[msgspec.Struct],
        path: tuple[str | int, ...],
        prefix: tuple[str | int, ...] = (),
    ) -> dict[str, Any]:
        """The keys of ``data``, a ``struct`` at ``path`` (``prefix``: the key of an inline table)."""
        fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
        kept: dict[str, Any] = {}
        for name, value in data.items():
            spec = fields.get(name)
            if spec is None:
                shown = self.where(path, prefix)
                where = f" in {shown}" if shown else ""
                self.problem(path, (*prefix, name), f'unknown key "{name}"{where}', value=False)
                continue
            got = self.value(value, spec.type, path, (*prefix, name))
            if got is not _DROP:
                kept[name] = got
        return kept

    def problem(
        self, table: tuple[str | int, ...], key: tuple[str | int, ...], line: str, *, value: bool
    ) -> None:
        path = (*table, *key)
        if value and any(path[: len(prefix)] == prefix for prefix in SELF_CHECKED):
            return  # its own parser says it (see the module doc)
        self.problems.append(Problem(path, f"{self.source}: {line}", unknown=not value))


def check(data: Mapping[str, Any], source: str = "config.toml") -> Checked:
    """``data`` (a parsed file) read through :class:`ConfigFile`; ``source`` names the file in
    each problem's line. Never raises: what is wrong is left out and said."""
    checker = _Checker(source)
    kept = checker.table(data, ConfigFile, ())
    try:
        settings = msgspec.convert(kept, ConfigFile, strict=False)
    except msgspec.ValidationError as e:  # not expected: every key was checked on its own
        checker.problems.append(Problem((), f"{source}: {e}", unknown=False))
        settings = ConfigFile()
    return Checked(settings, tuple(checker.problems))


# -- other programs' files read through a typed view (MCP servers, hooks, permission rules) ------

_AT = re.compile(r"^(.*?)(?: - at `\$([^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")

T = typing.TypeVar("T")


def _steps(path: str) -> list[str | int | None]:
    """msgspec's ``.key[0][...]`` as steps (None: a table's key msgspec does not name)."""
    steps: list[str | int | None] = []
    for name, index in _STEP.findall(path):
        steps.append(name if name else None if index == "..." else int(index))
    return steps


def _fails(value: Any, tp: Any, strict: bool) -> bool:
    try:
        msgspec.convert(value, tp, strict=strict)
    except msgspec.ValidationError:
        return True
    return False


#: The walk down a value along msgspec's path: each key, and the value and type it leads from.
_Walk = list[tuple[str | int, Any, Any]]


def _at(value: Any, tp: Any, steps: list[str | int | None], strict: bool) -> tuple[_Walk, Any, Any]:
    """Follow msgspec's path down ``value`` and ``tp``: the walk, and the value and type reached."""
    walk: _Walk = []
    for step in steps:
        inner = _strip(tp)
        struct = _struct_of(tp)
        if isinstance(step, str) and struct is not None and isinstance(value, Mapping):
            field = {f.encode_name: f for f in msgspec.structs.fields(struct)}.get(step)
            if field is None:
                break
            walk.append((step, value, tp))
            value, tp = value.get(step), field.type
        elif isinstance(step, int) and typing.get_origin(inner) is list and isinstance(value, list):
            walk.append((step, value, tp))
            value, tp = value[step], typing.get_args(inner)[0]
        elif step is None and typing.get_origin(inner) is dict and isinstance(value, Mapping):
            item_tp = typing.get_args(inner)[1]
            bad = next((k for k, v in value.items() if _fails(v, item_tp, strict)), None)
            if bad is None:
                break
            walk.append((str(bad), value, tp))
            value, tp = value[bad], item_tp
        else:
            break
    return walk, value, tp


def _named(key: str, keys: list[str | int]) -> str:
    """``mcpServers.x.args[0]``: ``key`` and the keys under it."""
    text = key
    for k in keys:
        text += f"[{k}]" if isinstance(k, int) else f"{'.' if text else ''}{_part(k)}"
    return text


def _problem(
    value: Any, tp: Any, error: msgspec.ValidationError, key: str, json_words: bool, strict: bool
) -> tuple[str, _Walk]:
    match = _AT.match(str(error))
    message, path = (match.group(1), match.group(2) or "") if match else (str(error), "")
    walk, bad, bad_tp = _at(value, tp, _steps(path), strict)
    words = _JSON_KINDS if json_words else _KINDS
    where = _named(key, [k for k, _, _ in walk]) or "the file"  # (key "": the value is a whole file)
    if message.startswith("Object missing required field"):
        return f"{where}: {message[:1].lower()}{message[1:]}", walk
    return f"{where} must be {_expected(bad_tp, message, words)}, not {_shown(bad)}", walk


def convert(value: Any, tp: type[T], *, key: str = "", json_words: bool = False, strict: bool = False) -> T:
    """``value`` (a parsed file's part) as ``tp``, or ValueError of one line naming the key under
    ``key`` that is wrong and what it must be (``args[0] must be a string, not 5``; ``key`` "": the
    value is a whole file). Not strict by default: a number written as a string reads, as the
    hand-written parsers before it did. ``json_words``: "an object", "an array" for a JSON file."""
    try:
        return msgspec.convert(value, tp, strict=strict)
    except msgspec.ValidationError as e:
        raise ValueError(_problem(value, tp, e, key, json_words, strict)[0]) from None


def _without(value: Any, walk: _Walk) -> Any:
    """``value`` (not changed) but for the deepest struct field on ``walk``, left out so that its
    default applies; None when the walk passes no struct field."""
    cut = next(
        (i for i in reversed(range(len(walk))) if isinstance(walk[i][0], str) and _struct_of(walk[i][2])),
        None,
    )
    if cut is None:
        return None

    def rebuilt(container: Any, depth: int) -> Any:
        step = walk[depth][0]
        copy: Any = dict(container) if isinstance(container, Mapping) else list(container)
        if depth == cut:
            del copy[step]
        else:
            copy[step] = rebuilt(container[step], depth + 1)
        return copy

    return rebuilt(value, 0)


def convert_fields(
    value: Any, tp: type[T], *, key: str = "", json_words: bool = False, strict: bool = False
) -> tuple[T, list[str]]:
    """``value`` as the struct ``tp`` whose every field has a default: a field of the wrong type, at
    any depth, is one line (as :func:`convert` says it) and left at its default, the rest still
    reads; a value that is no table at all is one line and every default."""
    problems: list[str] = []
    while True:
        try:
            return msgspec.convert(value, tp, strict=strict), problems
        except msgspec.ValidationError as e:
            line, walk = _problem(value, tp, e, key, json_words, strict)
            problems.append(line)
            value = _without(value, walk)
            if value is None:
                return msgspec.convert({}, tp), problems


#: What a settings or MCP file may weigh (a repository's 200 MB settings.json cost 450 MB at the
#: start); ``~/.claude.json``, which Claude Code grows with each project's history, is not capped.
MAX_JSON_FILE_BYTES = 16 * 1024 * 1024


def read_json_file(
    path: Path, tp: type[T], shown: str, what: str = "", *, limit: int | None = MAX_JSON_FILE_BYTES
) -> tuple[T | None, list[str]]:
    """A JSON file read as the struct ``tp`` (:func:`convert_fields`): None when there is no file,
    or it cannot be read, is over ``limit`` bytes or is no JSON; a line per problem, naming the
    file as ``shown`` and ending with ``what`` (e.g. "not read")."""
    tail = f"; {what}" if what else ""
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if limit is not None and size > limit:
                return None, [f"{shown}: {size:,} bytes, over the {limit:,} a settings file may be{tail}"]
            text = f.read() if limit is None else f.read(limit + 1)
    except FileNotFoundError:
        return None, []
    except OSError as e:
        return None, [f"{shown}: cannot read it ({e.strerror}){tail}"]
    if limit is not None and len(text) > limit:  # grown since it was measured
        return None, [f"{shown}: over the {limit:,} bytes a settings file may be{tail}"]
    try:
        data = msgspec.json.decode(text)
    except msgspec.DecodeError as e:
        return None, [f"{shown}: not valid JSON ({e}){tail}"]
    except RecursionError:  # msgspec's decoder raises it, not DecodeError (100,000 '[': a traceback)
        return None, [f"{shown}: not valid JSON (nested too deeply){tail}"]
    try:
        found, problems = convert_fields(data, tp, json_words=True)
    except RecursionError:
        return None, [f"{shown}: not valid JSON (nested too deeply){tail}"]
    return found, [f"{shown}: {line}{tail}" for line in problems]


# -- the README's reference and the JSON Schema, from the tree (scripts/config-reference) ---------


def json_schema() -> str:
    """``docs/config.schema.json``: the tree as JSON Schema (editors check a TOML file with it)."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agent-tui config.toml",
        **msgspec.json.schema(ConfigFile),
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _words(tp: Any, meta_enum: list[Any] | None = None) -> str:
    """A field's type as the reference says it."""
    if meta_enum:
        return " \\| ".join(f"`{_shown(v)}`" for v in meta_enum)
    if typing.get_origin(tp) is Annotated:
        return _words(typing.get_args(tp)[0])
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " \\| ".join(f"`{_shown(v)}`" for v in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_words(a) for a in typing.get_args(tp) if a is not type(None))
    if origin is list:
        return f"list of {_words(typing.get_args(tp)[0])}"
    if origin is dict:
        return f"table of {_words(typing.get_args(tp)[1])}"
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return "table"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, str(tp))


def _meta(tp: Any) -> Meta:
    found = (
        [m for m in typing.get_args(tp)[1:] if isinstance(m, Meta)]
        if typing.get_origin(tp) is Annotated
        else []
    )
    return found[0] if found else Meta()


def _tables() -> list[tuple[list[str], type[msgspec.Struct]]]:
    """Every table of the tree, depth first: its TOML headers (a table type used under several
    names, as the providers', is listed once with all of them) and its type."""
    found: dict[type[msgspec.Struct], list[str]] = {}

    def walk(struct: type[msgspec.Struct], path: str, listed: bool) -> None:
        header = f"[[{path}]]" if listed else f"[{path}]" if path else ""
        found.setdefault(struct, []).append(header)
        if len(found[struct]) > 1:
            return
        for f in msgspec.structs.fields(struct):
            inner = _strip(f.type)
            name = f"{path}.{f.encode_name}" if path else f.encode_name
            child = _struct_of(f.type)
            if child is not None:
                walk(child, name, False)
            elif typing.get_origin(inner) is dict:
                value = _strip(typing.get_args(inner)[1])
                if _struct_of(value) is not None:
                    walk(_struct_of(value), f"{name}.NAME", False)  # type: ignore[arg-type]
                elif typing.get_origin(value) is list and _struct_of(typing.get_args(value)[0]) is not None:
                    walk(_struct_of(typing.get_args(value)[0]), f"{name}.NAME", True)  # type: ignore[arg-type]
            elif typing.get_origin(inner) is list and _struct_of(typing.get_args(inner)[0]) is not None:
                walk(_struct_of(typing.get_args(inner)[0]), name, True)  # type: ignore[arg-type]

    walk(ConfigFile, "", False)
    return [(headers, struct) for struct, headers in found.items()]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference() -> str:
    """The README's reference section: a table of keys per TOML table."""
    out: list[str] = []
    for headers, struct in _tables():
        title = ", ".join(f"`{h}`" for h in headers) if headers != [""] else "The top level"
        doc = (struct.__doc__ or "").strip()
        out += [f"**{title}**: {doc}", "", "| key | type | default | |", "| --- | --- | --- | --- |"]
        for f in msgspec.structs.fields(struct):
            inner = _strip(f.type)
            nested = _struct_of(f.type) is not None and typing.get_origin(inner) not in (
                typing.Union,
                types.UnionType,
            )
            dict_of_tables = typing.get_origin(inner) is dict and (
                _struct_of(typing.get_args(inner)[1]) is not None
                or typing.get_origin(_strip(typing.get_args(inner)[1])) is list
            )
            list_of_tables = (
                typing.get_origin(inner) is list and _struct_of(typing.get_args(inner)[0]) is not None
            )
            if nested or dict_of_tables or list_of_tables:
                continue  # a table of its own, below
            meta = _meta(f.type)
            enum = (meta.extra_json_schema or {}).get("enum")
            default = "" if f.default in (msgspec.NODEFAULT, None) else f"`{_shown(f.default)}`"
            row = [f"`{f.encode_name}`", _words(f.type, enum), default, _cell(meta.description or "")]
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    return "\n".join(out)


#: Provider tables, by the name the file uses (tests keep it equal to the registry's names).
PROVIDER_TABLES = tuple(
    f.encode_name for f in msgspec.structs.fields(ConfigFile) if _struct_of(f.type) is ProviderSection
)

__all__ = [
    "EMPTY",
    "FATAL",
    "KEYMAPS",
    "PERMISSION_MODES",
    "PROVIDER_TABLES",
    "Checked",
    "CompactionModel",
    "CompactionTable",
    "ConfigFile",
    "Cost",
    "Hook",
    "HookGroup",
    "McpServer",
    "McpTable",
    "ModelEntry",
    "PermissionsTable",
    "Problem",
    "ProviderSection",
    "RetryTable",
    "SandboxTable",
    "ToolsTable",
    "check",
    "convert",
    "convert_fields",
    "json_schema",
    "read_json_file",
    "reference",
]
