"""The editor's MCP servers: the ``mcpServers`` of ``session/new`` and ``session/load`` as our
:class:`~agent_tui.agent.mcp.config.ServerSpec`.

ACP defines three transports: stdio (every agent must take it), HTTP (streamable HTTP, when the
agent advertises ``mcpCapabilities.http``) and the legacy SSE transport (``mcpCapabilities.sse``).
agent-tui's MCP layer speaks all three, so ``initialize`` advertises ``http`` and ``sse``; a
server of another kind (the unstable ``acp`` transport) is skipped with one warning.
The editor's values are taken as they are (no ``${VAR}`` expansion: the editor already did what
it does). Every ``env`` and ``headers`` value is a secret, registered for redaction as the
config's are. The servers start at once (``startup = "eager"``): the editor connects them for
the session, and the first prompt then finds their tools ready.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from acp.schema import (
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpCapabilities,
    McpServerStdio,
    SseMcpServer,
)

from agent_tui.agent.mcp.config import ServerSpec, register_secrets
from agent_tui.terminal_text import visible_line

#: What ``initialize`` advertises: the transports :func:`server_specs` connects.
CAPABILITIES = McpCapabilities(http=True, sse=True)
SOURCE = "the editor"  # where ``/session`` and the notices say the server was configured
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _name(raw: str, taken: set[str]) -> str:
    """A server name as our config accepts it (letters, digits, ``_``, ``-``), unique."""
    base = _UNSAFE.sub("_", raw.strip()) or "server"
    name, n = base, 2
    while name.replace("-", "_") in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name.replace("-", "_"))
    return name


def _pairs(items: Sequence[EnvVariable | HttpHeader] | None) -> dict[str, str]:
    found = {item.name: item.value for item in items or ()}
    register_secrets(found.values())
    return found


def server_specs(servers: Sequence[Any] | None) -> tuple[list[ServerSpec], list[str]]:
    """The servers to connect, in the editor's order, and one warning per server skipped."""
    specs: list[ServerSpec] = []
    warnings: list[str] = []
    taken: set[str] = set()
    for server in servers or ():
        shown = visible_line(str(getattr(server, "name", "?")))
        if isinstance(server, McpServerStdio):
            specs.append(
                ServerSpec(
                    name=_name(server.name, taken),
                    source=SOURCE,
                    command=server.command,
                    args=tuple(server.args),
                    env=_pairs(server.env),
                    startup="eager",
                )
            )
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            specs.append(
                ServerSpec(
                    name=_name(server.name, taken),
                    source=SOURCE,
                    url=server.url,
                    headers=_pairs(server.headers),
                    startup="eager",
                    sse=isinstance(server, SseMcpServer),
                )
            )
        else:
            kind = getattr(server, "type", type(server).__name__)
            warnings.append(
                f"MCP server {shown!r} from the editor skipped: its transport {kind!r} is not "
                "supported (stdio, http or sse)"
            )
    return specs, warnings


__all__ = ["CAPABILITIES", "server_specs"]
