"""The RPC command table: pi's command name -> handler, joined from the ``rpc_*_commands`` modules.

Each command module exports its own ``COMMANDS`` (a dict); this module joins them, in the order of
pi's command reference, and refuses a name two modules both claim, so a command is found by
reading one table and no command exists by the side effect of an import.
:class:`~agent_tui.cli.rpc_server.RpcServer` looks a command up in :data:`HANDLERS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_tui.cli import (
    rpc_checkpoint_commands,
    rpc_model_commands,
    rpc_prompt_commands,
    rpc_session_commands,
    rpc_state_commands,
)
from agent_tui.cli.rpc_registry import Handler

#: The command modules' tables, grouped as pi's command reference groups them (then agent-tui's own).
GROUPS: tuple[Mapping[str, Handler], ...] = (
    rpc_prompt_commands.COMMANDS,  # prompting, the queue, bash
    rpc_state_commands.COMMANDS,  # state, messages, entries
    rpc_model_commands.COMMANDS,  # models, thinking, queue modes, compaction, retry, get_commands
    rpc_session_commands.COMMANDS,  # the tree, edits, switching, forks and clones, exports
    rpc_checkpoint_commands.COMMANDS,  # agent-tui's file checkpoints
)


def join(groups: tuple[Mapping[str, Handler], ...]) -> dict[str, Handler]:
    """One table from ``groups``; ValueError naming a command that two of them define."""
    table: dict[str, Handler] = {}
    for group in groups:
        for name, handler in group.items():
            if name in table:
                raise ValueError(f"RPC command {name!r} is defined twice")
            table[name] = handler
    return table


#: Every RPC command (``extension_ui_response``, an answer, is the server's own: it has no response).
HANDLERS: dict[str, Handler] = join(GROUPS)


__all__ = ["GROUPS", "HANDLERS", "join"]
