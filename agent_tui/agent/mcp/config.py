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

from agent_tui.store.redact import register_secret

NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_TIMEOUT = 60.0  # seconds per request (pi's default)
DEFAULT_STARTUP_TIMEOUT = 30.0  # seconds for the process to start and answer initialize
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

#: The ``type`` values meaning streamable HTTP (Claude Code writes "http"; others the long names).
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
#: Project files that start programs: read only in a trusted folder.
PROJECT_FILES = (".mcp.json", ".pi/mcp.json")


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


def _strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return [str(v) for v in value]


def _table(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise ValueError(f"{what} must be a table of strings")
    return {str(k): str(v) for k, v in value.items()}


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
    """One entry (TOML or ``mcpServers`` JSON); ValueError says what is wrong with it."""
    if not NAME_RE.match(name):
        raise ValueError("a server name may hold only letters, digits, _ and -")
    if not isinstance(raw, Mapping):
        raise ValueError("must be a table")
    kind = raw.get("type")
    if kind is not None and kind not in (*HTTP_TYPES, "stdio", "sse"):
        raise ValueError(f"type {kind!r} is not supported (stdio, http or sse)")
    missing: list[str] = []
    command = raw.get("command")
    url = raw.get("url")
    if command is not None and not isinstance(command, str):
        raise ValueError("command must be a string")
    if url is not None and not isinstance(url, str):
        raise ValueError("url must be a string")
    if not command and not url:
        raise ValueError("needs a command (stdio) or a url (streamable HTTP or SSE)")
    if kind == "sse" and not url:
        raise ValueError('type "sse" needs a url')
    args = [expand(a, env, missing) for a in _strings(raw.get("args"), "args")]
    server_env = {k: expand(v, env, missing) for k, v in _table(raw.get("env"), "env").items()}
    headers = {k: expand(v, env, missing) for k, v in _table(raw.get("headers"), "headers").items()}
    cwd = raw.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            raise ValueError("cwd must be a string")
        cwd = str(base / os.path.expanduser(expand(cwd, env, missing)))
    startup = raw.get("startup", "lazy")
    if startup not in ("lazy", "eager"):
        raise ValueError('startup must be "lazy" or "eager"')
    try:
        timeout = float(raw.get("timeout", DEFAULT_TIMEOUT))
        startup_timeout = float(raw.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT))
    except (TypeError, ValueError):
        raise ValueError("timeout must be a number of seconds") from None
    if command is not None:
        command = os.path.expanduser(expand(command, env, missing))
    if url is not None:
        url = expand(url, env, missing)
    if missing:
        raise ValueError(f"the environment variable {missing[0]} is not set")
    register_secrets([*server_env.values(), *headers.values()])
    return ServerSpec(
        name=name,
        source=source,
        command=command or None,
        args=tuple(args),
        env=server_env,
        cwd=cwd,
        url=None if command else url,
        headers=headers,
        startup=str(startup),
        timeout=timeout,
        startup_timeout=startup_timeout,
        enabled=raw.get("enabled", raw.get("disabled") is not True) is not False,
        project=project,
        sse=kind == "sse" and not command,
    )


def _json_servers(path: Path, key_path: tuple[str, ...] = ()) -> Mapping[str, Any] | None:
    """The ``mcpServers`` object of a JSON file (under ``key_path``), None when there is none."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read it as JSON ({e})") from e
    for key in key_path:
        data = data.get(key) if isinstance(data, Mapping) else None
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    return servers if isinstance(servers, Mapping) else None


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
    servers = mcp.get("servers") if isinstance(mcp, Mapping) else None
    if isinstance(servers, Mapping):
        for name, raw in servers.items():
            add(str(name), raw, config_name, folder)
    elif servers is not None:
        found.warnings.append(f"[mcp.servers] in {config_name} must be a table of servers")
    sources: list[tuple[Path, tuple[str, ...], bool]] = []
    if trusted:
        sources += [(path, (), True) for path in project_files(folder)]
    sources += [
        (home / ".claude.json", ("projects", str(folder.resolve())), False),
        (home / ".claude.json", (), False),
        (pi_dir / "mcp.json", (), False),
    ]
    for path, key_path, project in sources:
        try:
            entries = _json_servers(path, key_path)
        except ValueError as e:
            found.warnings.append(str(e))
            continue
        for name, raw in (entries or {}).items():
            shown = (
                str(path).replace(str(home), "~", 1) if not project else path.relative_to(folder).as_posix()
            )
            add(str(name), raw, shown, folder, project)
    return found


__all__ = [
    "DEFAULT_TIMEOUT",
    "PROJECT_FILES",
    "ServerConfig",
    "ServerSpec",
    "expand",
    "parse_server",
    "project_files",
    "read_servers",
    "register_secrets",
]
