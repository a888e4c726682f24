"""``agent-tui context --format text``: the model's view with provenance and token counts."""

from __future__ import annotations

from agent_tui.projection.compaction import context_tokens
from agent_tui.projection.context import Projection, Status
from agent_tui.projection.describe import first_line
from agent_tui.projection.models import lookup
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message, estimate_tools
from agent_tui.store.index import SessionIndex


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
                else _message_line(m.message)
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
    return "\n".join(lines) + "\n"


def context_line(projection: Projection, window: int) -> str:
    """What compaction decides on: the provider's last reported usage plus an estimate of what came after."""
    tokens = context_tokens(projection)
    percent = 100 * tokens.tokens / window if window else 0
    if tokens.usage_entry_id is None:
        return f"context ≈ {tokens.tokens:,} tokens ({percent:.1f}%), all estimated (no usage reported since the last edit or compaction)"
    return (
        f"context ≈ {tokens.tokens:,} tokens ({percent:.1f}%): {tokens.usage_tokens:,} reported with "
        f"{tokens.usage_entry_id} + {tokens.trailing_tokens:,} estimated after it"
    )


def _message_line(message: dict[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    else:
        text = ""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:69] + "…" if len(line) > 70 else line
