"""``agent-tui context --format text``: the model's view with provenance and token counts.

Every line is made inert (``terminal_text.visible_line``): names, ids, models and
first lines come from the session file."""

from __future__ import annotations

from agent_tui.projection.compaction import context_line
from agent_tui.projection.context import Projection, Status
from agent_tui.projection.describe import first_line, message_first_line
from agent_tui.projection.models import lookup
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message, estimate_tools
from agent_tui.store.index import SessionIndex
from agent_tui.terminal_text import visible_line


def render_context(index: SessionIndex, projection: Projection, name: str) -> str:
    model = projection.model or {}
    info = lookup(model.get("modelId"), model.get("provider"))
    lines = [
        f"# {name}",
        f"# leaf {projection.leaf_id}  model {model.get('provider') or '?'}/{model.get('modelId') or '?'}"
        f"  thinking {projection.thinking_level}",
    ]
    if projection.compaction_id:
        lines.append(
            f"# compaction {projection.compaction_id}: {len(projection.summarized_ids)} entries summarized"
        )
    lines.append(f"{'#':>5}  {'role':<10} {'entry':<10} {'status':<16} {'tokens':>7}  text")
    total = 0
    n = 0
    for ce in projection.entries:
        if not ce.messages:
            if ce.status is Status.HIDDEN:
                lines.append(
                    f"{'-':>5}  {'-':<10} {ce.entry.id:<10} {'hidden':<16} {0:>7}  (by edit {ce.edit_id}) {first_line(ce.entry, 60)}"
                )
            continue
        for m in ce.messages:
            n += 1
            tokens = estimate_message(m.message)
            total += tokens
            status = m.status.value + (f" ({m.kind})" if m.kind != m.role else "")
            text = (
                first_line(ce.entry, 70)
                if ce.entry.type == "message" and m.status is not Status.REPLACED
                else message_first_line(m.message, 70)
            )
            lines.append(f"{n:>5}  {m.role:<10} {m.source_id:<10} {status:<16} {tokens:>7}  {text}")
    prepared = prepare(projection.messages)
    tool_tokens = estimate_tools(prepared.tools)
    if tool_tokens:
        lines.append(
            f"{'':>5}  {'tools':<10} {'':<10} {'':<16} {tool_tokens:>7}  {len(prepared.tools)} tool definitions"
        )
        total += tool_tokens
    percent = 100 * total / info.context_window if info.context_window else 0
    lines.append(f"total ≈ {total:,} tokens of {info.context_window:,} ({percent:.1f}%)")
    lines.append(context_line(projection, info.context_window))
    for repair in prepared.repairs:
        lines.append(f"repair: {repair}")
    return "".join(visible_line(line) + "\n" for line in lines)  # every field quotes the session
