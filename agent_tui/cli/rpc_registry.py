"""What the RPC command handlers share: their type, their results, their errors, their field readers.

A handler gets the server (an :class:`~agent_tui.cli.rpc_host.RpcHost`) and the command (a JSON object)
and returns the response's ``data`` (None: a response without it), or :data:`LATER` when a task
it started answers by itself; :class:`CommandError` is a response with ``success: false``. The
handlers are grouped as pi's command reference groups them: :mod:`agent_tui.cli.rpc_prompt_commands`
(prompting, the queue, bash), :mod:`agent_tui.cli.rpc_state_commands` (state, messages, entries),
:mod:`agent_tui.cli.rpc_session_commands` (the tree, edits, switching, forks and clones, exports)
and :mod:`agent_tui.cli.rpc_model_commands` (models, thinking, queue modes, compaction, the retry
and compaction switches, the commands one can prompt with), each exporting its ``COMMANDS``
table; :mod:`agent_tui.cli.rpc_commands` joins them into the one table the server reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_tui.cli.rpc_host import RpcHost
from agent_tui.store.record import JSONObject


class CommandError(Exception):
    """A command that cannot be done: its response says why (``success: false``)."""


Handler = Callable[[RpcHost, JSONObject], Awaitable[JSONObject | None]]

#: A handler's result meaning "the response is written later, by a task it started".
LATER: JSONObject = {}
#: A handler's result meaning ``"data": null`` (pi's answer when there is nothing to cycle to).
NULL: JSONObject = {}


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


__all__ = ["LATER", "NULL", "CommandError", "Handler", "bool_field", "text_field"]
