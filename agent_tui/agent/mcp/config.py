"""Which MCP servers to start: agent-tui's ``[mcp.servers.NAME]``, Claude Code's and pi's files.

Read, in this order (the first that names a server wins):

- the config file's ``[mcp.servers.NAME]`` tables (``command``, ``args``, ``env``, ``cwd`` for a
  stdio server; ``url``, ``headers`` for streamable HTTP, and ``type = "sse"`` with them for the
  legacy SSE transport; ``startup = "lazy" | "eager"``, ``timeout``, ``enabled``);
- the project's ``.mcp.json`` (Claude Code) and ``.pi/mcp.json`` (pi), only when the folder is
  trusted (they start programs);
- the user's ``~/.claude.json`` (its ``mcpServers``, and the ``projects[cwd].mcpServers`` Claude
  Code keeps per folder) and ``~/.pi/agent/mcp.json`` (``PI_CODING_AGENT_DIR`` moves it, as in pi).

``${VAR}`` and ``${VAR:-default}`` in a command, an argument, an ``env`` or ``headers`` value or
a URL are the environment's, as in Claude Code. Every ``env`` and ``headers`` value is a secret:
it is registered for redaction and never shown (``/mcp`` shows the names only).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agent_tui.config_schema import MAX_JSON_FILE_BYTES, McpServer, convert, convert_fields, read_json_file
from agent_tui.store.redact import register_secret

NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_TIMEOUT = 60.0  # seconds per request (pi's default)
DEFAULT_STARTUP_TIMEOUT = 30.0  # seconds for the process to start and answer initialize
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

#: The ``type`` values meaning streamable HTTP (Claude Code writes "http"; others the long names).
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
#: Project files that start programs: read only in a trusted folder.
PROJECT_FILES = (".mcp.json", ".pi/mcp.json")


class ServerEntry(McpServer, frozen=True, forbid_unknown_fields=False):
    """One server as any of the files writes it: the config's ``[mcp.servers.NAME]`` table (its
    keys, described in :class:`agent_tui.config_schema.McpServer`), or an ``mcpServers`` entry of
    Claude Code's and pi's files, whose field names are the same. Keys agent-tui does not read are
    left alone (the JSON files are shared with those programs; the config's are reported by the
    config check)."""


class McpFile(msgspec.Struct, frozen=True, rename="camel"):
    """``.mcp.json``, ``.pi/mcp.json``, ``~/.pi/agent/mcp.json``: the servers by name, each read on
    its own (one that is wrong is skipped, the others load); any other key is the file's own."""

    mcp_servers: dict[str, Any] = msgspec.field(default_factory=dict)


class ClaudeJson(McpFile, frozen=True):
    """``~/.claude.json``: the user's servers, and each folder's under ``projects`` (only this
    folder's entry is read: another's mistakes are not ours to report)."""

    projects: dict[str, Any] = msgspec.field(default_factory=dict)


class _ConfigMcp(msgspec.Struct, frozen=True):
    """The config file's ``[mcp]`` as this reader sees it (``wait`` and the rest: the typed config)."""

    servers: dict[str, Any] = msgspec.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One configured server. ``env`` and ``headers`` hold secrets: the repr hides them."""

    name: str
    source: str  # where it was configured, e.g. "config.toml", ".mcp.json"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    startup: str = "lazy"  # "lazy": at the first turn; "eager": when the app starts
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    enabled: bool = True
    project: bool = False  # from a project file (needed the folder's trust)
    sse: bool = False  # a url served with the legacy SSE transport (``"type": "sse"``)

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "sse" if self.sse else "http"

    def key(self) -> tuple[Any, ...]:
        """What identifies the running server: a change restarts it."""
        return (
            self.name,
            self.command,
            self.args,
            tuple(sorted(self.env.items())),
            self.cwd,
            self.url,
            self.sse,
            tuple(sorted(self.headers.items())),
            self.timeout,
            self.startup_timeout,
        )


@dataclass(slots=True)
class ServerConfig:
    """What was found: the servers (in order) and one warning per entry skipped."""

    servers: list[ServerSpec] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def expand(value: str, env: Mapping[str, str], missing: list[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` from ``env``; a variable that is unset and has no default
    is added to ``missing`` and expands to nothing."""

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env and env[name] != "":
            return env[name]
        if default is not None:
            return default
        missing.append(name)
        return ""

    return _VAR.sub(sub, value)


def register_secrets(values: Iterable[str]) -> None:
    """Every ``env`` and ``headers`` value of a server is a secret, redacted wherever agent-tui
    writes (an ``Authorization: Bearer …`` header's token on its own too)."""
    for value in values:
        register_secret(value, "mcp-secret")
        scheme, _, token = value.partition(" ")
        if scheme.lower() in ("bearer", "basic", "token"):
            register_secret(token, "mcp-secret")


def parse_server(
    name: str, raw: Any, source: str, *, base: Path, env: Mapping[str, str], project: bool = False
) -> ServerSpec:
    """One entry (TOML or ``mcpServers`` JSON) read as a :class:`ServerEntry`; ValueError says
    what is wrong with it in one line (the key, and what it must be)."""
    if not NAME_RE.match(name):
        raise ValueError("a server name may hold only letters, digits, _ and -")
    entry = convert(raw, ServerEntry, json_words=source.endswith(".json"))
    if not entry.command and not entry.url:
        raise ValueError("needs a command (stdio) or a url (streamable HTTP or SSE)")
    if entry.type == "sse" and not entry.url:
        raise ValueError('type "sse" needs a url')
    missing: list[str] = []
    args = [expand(str(a), env, missing) for a in entry.args]
    server_env = {str(k): expand(str(v), env, missing) for k, v in entry.env.items()}
    headers = {str(k): expand(str(v), env, missing) for k, v in entry.headers.items()}
    cwd = str(base / os.path.expanduser(expand(entry.cwd, env, missing))) if entry.cwd is not None else None
    command = os.path.expanduser(expand(entry.command, env, missing)) if entry.command else None
    url = expand(entry.url, env, missing) if entry.url is not None else None
    if missing:
        raise ValueError(f"the environment variable {missing[0]} is not set")
    register_secrets([*server_env.values(), *headers.values()])
    enabled = entry.enabled if entry.enabled is not None else entry.disabled is not True
    return ServerSpec(
        name=name,
        source=source,
        command=command or None,
        args=tuple(args),
        env=server_env,
        cwd=cwd,
        url=None if command else url,
        headers=headers,
        startup=entry.startup,
        timeout=entry.timeout,
        startup_timeout=entry.startup_timeout,
        enabled=enabled,
        project=project,
        sse=entry.type == "sse" and not command,
    )


def project_files(cwd: str | Path) -> list[Path]:
    """The project's MCP files that exist (they need the folder's trust)."""
    return [Path(cwd) / name for name in PROJECT_FILES if (Path(cwd) / name).is_file()]


def read_servers(
    config_data: Mapping[str, Any],
    cwd: str | Path,
    *,
    home: Path | None = None,
    trusted: bool = False,
    env: Mapping[str, str] | None = None,
    config_name: str = "config.toml",
) -> ServerConfig:
    """Every configured server, the first definition of a name winning (see the module doc)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    pi_dir = (
        Path(env["PI_CODING_AGENT_DIR"]).expanduser()
        if env.get("PI_CODING_AGENT_DIR")
        else home / ".pi" / "agent"
    )
    found = ServerConfig()
    seen: set[str] = set()
    folder = Path(cwd)

    def add(name: str, raw: Any, source: str, base: Path, project: bool = False) -> None:
        canonical = name.replace("-", "_")
        if canonical in seen:
            return
        try:
            spec = parse_server(name, raw, source, base=base, env=env, project=project)
        except ValueError as e:
            found.warnings.append(f"MCP server {name!r} in {source} skipped: {e}")
            return
        seen.add(canonical)
        found.servers.append(spec)

    mcp = config_data.get("mcp")
    if isinstance(mcp, Mapping):  # (another type is the config check's line)
        table, problems = convert_fields(mcp, _ConfigMcp, key="mcp")
        found.warnings += [f"{config_name}: {line}" for line in problems]
        for name, raw in table.servers.items():
            add(str(name), raw, config_name, folder)
    claude_json = home / ".claude.json"
    sources: list[tuple[Path, type[McpFile], bool]] = []
    if trusted:
        sources += [(path, McpFile, True) for path in project_files(folder)]
    sources += [(claude_json, ClaudeJson, False), (pi_dir / "mcp.json", McpFile, False)]
    for path, tp, project in sources:
        shown = str(path).replace(str(home), "~", 1) if not project else path.relative_to(folder).as_posix()
        read, problems = read_json_file(
            path, tp, shown, limit=None if tp is ClaudeJson else MAX_JSON_FILE_BYTES
        )
        found.warnings += problems
        if read is None:
            continue
        entries = list(read.mcp_servers.items())
        if isinstance(read, ClaudeJson):  # the folder's own servers come first, as Claude Code has it
            local = read.projects.get(str(folder.resolve()))
            if local is not None:
                key = f"projects[{json.dumps(str(folder.resolve()))}]"
                mine, problems = convert_fields(local, McpFile, key=key, json_words=True)
                found.warnings += [f"{shown}: {line}" for line in problems]
                entries = list(mine.mcp_servers.items()) + entries
        for name, raw in entries:
            add(str(name), raw, shown, folder, project)
    return found


__all__ = [
    "DEFAULT_TIMEOUT",
    "PROJECT_FILES",
    "ClaudeJson",
    "McpFile",
    "ServerConfig",
    "ServerEntry",
    "ServerSpec",
    "expand",
    "parse_server",
    "project_files",
    "read_servers",
    "register_secrets",
]
