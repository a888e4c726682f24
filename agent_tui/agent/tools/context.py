"""context{action, ids?, limit?}: the model inspects and trims its own context (opt-in,
``[tools] context = true``).

``list`` names the largest tool results in view (entry id, tool, what it ran, tokens);
``hide`` replaces the output of the named tool results with a one-line stub (a replacement, not
a removal, so every call keeps its result and the request stays valid); ``restore`` puts their
output back. Only tool results can be touched: never a user message, an assistant message or the
system prompt. Each hide or restore is one surgery (``projection.surgery``): ``context_edit``
entries and an ``agent-tui.surgery`` record whose author is ``model``, so the panel and the tree
mark the edits and the user can undo them in one go.
"""

from __future__ import annotations

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    number_arg,
)
from agent_tui.projection.context import ContextEntry, Projection, Status, project
from agent_tui.projection.describe import plural
from agent_tui.projection.surgery import (
    Surgery,
    apply,
    draft_tokens,
    edit_authors,
    tool_call_blocks,
    tool_stub,
)
from agent_tui.projection.tokens import estimate_message, image_rule
from agent_tui.store.session import Session, restore_fields

DEFAULT_LIMIT = 10


class ContextTool(Tool):
    name = "context"
    snippet = "List your largest tool results; hide ones you no longer need, or restore them"
    description = (
        "Manage your own context window. action=list shows the largest tool results in your context "
        "(entry id, tool, tokens). action=hide with ids replaces those tool results' output with a "
        "one-line stub, freeing the tokens, until action=restore with the same ids puts it back. Only "
        "tool results can be hidden; user messages and the system prompt never can. Hide output you "
        "no longer need (old file reads, long test logs); run the tool again when you need it fresh."
    )
    guidelines = ("Use the context tool to hide large tool output you no longer need.",)
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "hide", "restore"], "description": "What to do"},
            "ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Entry ids of tool results (from action=list), for hide and restore",
            },
            "limit": {
                "type": "number",
                "description": f"How many results list shows (default {DEFAULT_LIMIT})",
            },
        },
        "required": ["action"],
    }

    def __init__(self, session: Session) -> None:
        self.session = session

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        action = args.get("action")
        projection = project(self.session.index)
        if action == "list":
            return ToolResult.text(self._list(projection, max(1, number_arg(args, "limit") or DEFAULT_LIMIT)))
        if action not in ("hide", "restore"):
            raise ToolError('action must be "list", "hide" or "restore"')
        ids = args.get("ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise ToolError(f"{action} needs ids: the entry ids of tool results, from action=list")
        surgery = self._plan(projection, action, list(dict.fromkeys(ids)))
        record = apply(self.session, surgery)
        verb = "Hid" if action == "hide" else "Restored"
        n = len(surgery.edits)
        return ToolResult.text(
            f"{verb} {plural(n, 'tool result')} ({', '.join(surgery.targets)}): context "
            f"≈ {surgery.estimated_before:,} → {surgery.tokens_after:,} tokens.",
            {"record": record.id, "targets": surgery.targets},
        )

    def _list(self, projection: Projection, limit: int) -> str:
        calls = tool_call_blocks(projection.entries)
        authors = edit_authors(projection.path)
        rows: list[tuple[int, str]] = []
        for ce in _tool_results(projection):
            message = ce.messages[0].message
            tokens = estimate_message(message, image_rule(projection.model))
            call = calls.get(str(message.get("toolCallId")), {})
            what = tool_stub(str(message.get("toolName") or call.get("name") or ""), call.get("arguments"))
            state = ""
            if ce.status is Status.REPLACED:
                who = authors.get(ce.edit_id or "", ("user", "", ""))[0]
                state = f" [hidden by {who}]" if who in ("model", "prune") else " [replaced]"
            rows.append((tokens, f"{ce.entry.id}  {what}  {tokens:,} tokens{state}"))
        if not rows:
            return "No tool results in context."
        rows.sort(key=lambda r: -r[0])
        shown = rows[:limit]
        total = sum(t for t, _ in rows)
        head = f"{len(rows)} tool results in context, {total:,} tokens; the largest {len(shown)}:"
        return "\n".join([head, *(line for _, line in shown)])

    def _plan(self, projection: Projection, action: str, ids: list[str]) -> Surgery:
        by_id = {ce.entry.id: ce for ce in projection.entries}
        refused = []
        for i in ids:
            ce = by_id.get(i)
            if ce is None:
                refused.append(f"{i} is not in the context")
            elif not (ce.entry.type == "message" and ce.entry.role == "toolResult"):
                what = ce.entry.role or ce.entry.type
                refused.append(
                    f"{i} is not a tool result ({what}): only tool results can be hidden or restored"
                )
        if refused:
            raise ToolError("Nothing was changed: " + "; ".join(refused))
        calls = tool_call_blocks(projection.entries)
        edits: list[JSONObject] = []
        for i in ids:
            ce = by_id[i]
            if action == "restore":
                if ce.edit_id is None or ce.status is Status.RESTORED:
                    continue
                edits.append(restore_fields(ce.entry))
                continue
            if ce.status is Status.HIDDEN or not ce.messages:
                continue
            message = ce.messages[0].message
            call = calls.get(str(message.get("toolCallId")), {})
            name = str(message.get("toolName") or call.get("name") or "")
            stub = (
                f"[output of {tool_stub(name, call.get('arguments'))} hidden by the model: "
                f"{estimate_message(message, image_rule(projection.model)):,} tokens; context restore {i} brings it back]"
            )
            edits.append(
                {
                    "type": "context_edit",
                    "targetId": i,
                    "replacement": {"content": [{"type": "text", "text": stub}]},
                }
            )
        if not edits:
            raise ToolError(
                f"Nothing to {action}: {'none of them is hidden' if action == 'restore' else 'already hidden'}"
            )
        return draft_tokens(projection, Surgery("context-tool", "model", edits, extra={"tool": action}))


def _tool_results(projection: Projection) -> list[ContextEntry]:
    return [
        ce
        for ce in projection.entries
        if ce.entry.type == "message" and ce.entry.role == "toolResult" and ce.messages
    ]
