"""agent-tui's RPC commands on file checkpoints: ``list_checkpoints`` (the active branch's, as
``agent-tui checkpoints --json``) and ``restore_checkpoint`` (``entryId``; ``dryRun: true`` only
lists what would change; ``force: true`` also overwrites files changed outside the agent)."""

from __future__ import annotations

import asyncio

from agent_tui.agent.checkpointing import RestoreConflict
from agent_tui.agent.checkpoints import CheckpointError
from agent_tui.cli.rpc_host import RpcHost
from agent_tui.cli.rpc_registry import CommandError, Handler, bool_field, text_field
from agent_tui.store.record import JSONObject


async def _list_checkpoints(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    return {"checkpoints": server.agent.checkpoints()}


async def _restore_checkpoint(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    entry_id = text_field(cmd, "entryId")
    assert entry_id is not None
    dry_run = bool_field(cmd, "dryRun", False)
    force = bool_field(cmd, "force", False)
    server.idle("restore_checkpoint")
    agent = server.agent
    try:
        plan = await asyncio.to_thread(agent.plan_restore, entry_id)
        if plan.mark is None:
            raise CommandError(f"restore_checkpoint: no file checkpoint at or before entry {entry_id}")
        if dry_run:
            return {"dryRun": True, **plan.to_json()}
        done = await asyncio.to_thread(agent.restore_files, entry_id, force=force)
    except RestoreConflict as e:
        raise CommandError(f"restore_checkpoint: {e} (force: true writes them)") from None
    except (CheckpointError, KeyError) as e:
        raise CommandError(f"restore_checkpoint: {e}") from None
    return {
        "dryRun": False,
        **plan.to_json(),
        "refused": [{"path": p, "why": w} for p, w in done.refused],
        "undoEntryId": done.undo_id,
        "restoreEntryId": done.entry.id if done.entry is not None else None,
    }


#: This module's commands, pi's name -> handler (:mod:`agent_tui.cli.rpc_commands` joins the tables).
COMMANDS: dict[str, Handler] = {
    "list_checkpoints": _list_checkpoints,
    "restore_checkpoint": _restore_checkpoint,
}


__all__ = ["COMMANDS"]
