"""pi's RPC commands that read the session's state: ``get_state``, ``get_session_stats``,
``get_messages``, ``get_last_assistant_text`` (pi's State), and agent-tui's ``get_context`` (the
model's view at a leaf) and ``get_entries`` (the file's entries, or those after ``since``).
"""

from __future__ import annotations

from agent_tui.cli.rpc_host import RpcHost
from agent_tui.cli.rpc_registry import CommandError, Handler, text_field
from agent_tui.store.record import JSONObject


async def _get_state(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    agent, session = server.agent, server.session
    data: JSONObject = {
        "model": server.model_object(),
        "thinkingLevel": agent.thinking_level,
        "isStreaming": server.busy and not server.compacting,
        "isCompacting": server.compacting,
        "steeringMode": agent.loop.queue.steering_mode,
        "followUpMode": agent.loop.queue.follow_up_mode,
        "sessionFile": str(session.path),
        "sessionId": session.id,
        "leafId": session.leaf_id,
        "autoCompactionEnabled": agent.config.compaction_settings(agent.model).enabled,
        "messageCount": len(session.projection().messages),
        "pendingMessageCount": len(agent.loop.queue),
        "permissionMode": agent.permission_mode.value,  # agent-tui's (set_permission_mode)
    }
    if session.name:
        data["sessionName"] = session.name
    return data


async def _get_session_stats(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    """pi's SessionStats from the core's :meth:`~agent_tui.agent.agent_session.AgentSession.stats`:
    numbers everywhere (``cost`` 0 when no call has a price, as pi counts a local model)."""
    session = server.session
    stats = server.agent.stats()
    totals = stats.totals
    window = stats.context_window
    return {
        "sessionFile": str(session.path),
        "sessionId": session.id,
        "userMessages": stats.user_messages,
        "assistantMessages": stats.assistant_messages,
        "toolCalls": stats.tool_calls,
        "toolResults": stats.tool_results,
        "totalMessages": stats.total_messages,
        "tokens": {
            "input": totals.input,
            "output": totals.output,
            "cacheRead": totals.cache_read,
            "cacheWrite": totals.cache_write,
            "total": totals.tokens,
        },
        "cost": stats.cost,
        "contextUsage": {
            "tokens": stats.context_tokens,
            "contextWindow": window,
            "percent": round(100 * stats.context_tokens / window, 1) if window > 0 else 0.0,
        },
    }


async def _get_messages(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    return {"messages": server.session.messages()}


async def _get_context(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    return server.session.context(text_field(cmd, "leafId", required=False))


async def _get_entries(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    since = text_field(cmd, "since", required=False)
    entries = server.session.entries()
    if since is not None:
        ids = [e.get("id") for e in entries]
        if since not in ids:
            raise CommandError(f"get_entries: no entry {since!r}")
        entries = entries[ids.index(since) + 1 :]
    return {"entries": entries, "leafId": server.session.leaf_id}


async def _get_last_assistant_text(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    for message in reversed(server.session.messages()):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        if any(texts):
            return {"text": "".join(texts)}
    return {"text": None}


#: This module's commands, pi's name -> handler (:mod:`agent_tui.cli.rpc_commands` joins the tables).
COMMANDS: dict[str, Handler] = {
    "get_state": _get_state,
    "get_session_stats": _get_session_stats,
    "get_messages": _get_messages,
    "get_context": _get_context,
    "get_entries": _get_entries,
    "get_last_assistant_text": _get_last_assistant_text,
}


__all__ = ["COMMANDS"]
