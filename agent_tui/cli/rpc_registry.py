"""The RPC commands' table: :func:`command` registers a handler under pi's command name.

A handler gets the :class:`~agent_tui.cli.rpc_server.RpcServer` and the command (a JSON object)
and returns the response's ``data`` (None: a response without it), or :data:`LATER` when a task
it started answers by itself; :class:`CommandError` is a response with ``success: false``. The
handlers are grouped as pi's command reference groups them: :mod:`agent_tui.cli.rpc_prompt_commands`
(prompting, the queue, bash), :mod:`agent_tui.cli.rpc_state_commands` (state, messages, entries),
:mod:`agent_tui.cli.rpc_session_commands` (the tree, edits, switching, forks and clones, exports)
and :mod:`agent_tui.cli.rpc_model_commands` (models, thinking, queue modes, compaction, the retry
and compaction switches, the commands one can prompt with).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agent_tui.store.record import JSONObject

if TYPE_CHECKING:
    from agent_tui.cli.rpc_server import RpcServer


class CommandError(Exception):
    """A command that cannot be done: its response says why (``success: false``)."""


Handler = Callable[["RpcServer", JSONObject], Awaitable[JSONObject | None]]
HANDLERS: dict[str, Handler] = {}

#: A handler's result meaning "the response is written later, by a task it started".
LATER: JSONObject = {}
#: A handler's result meaning ``"data": null`` (pi's answer when there is nothing to cycle to).
NULL: JSONObject = {}


def command(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        HANDLERS[name] = handler
        return handler

    return register


def text_field(cmd: JSONObject, field: str, *, required: bool = True) -> str | None:
    """A string field of ``cmd``; CommandError naming it when it is missing (and ``required``) or not a string."""
    value = cmd.get(field)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise CommandError(f"{cmd['type']}: '{field}' must be a string")
    return value


def bool_field(cmd: JSONObject, field: str, default: bool | None = None) -> bool:
    """A true/false field of ``cmd`` (``default`` when it is missing; required without one)."""
    value = cmd.get(field, default)
    if not isinstance(value, bool):
        raise CommandError(f"{cmd['type']}: '{field}' must be true or false")
    return value


__all__ = ["HANDLERS", "LATER", "NULL", "CommandError", "Handler", "bool_field", "command", "text_field"]
