"""``agent-tui context --format text``: the model's view with provenance and token counts.

The same rows as the app's panel (``projection.rows``: the request as sent, the
system prompt first), the one context figure with how it is made, the repairs,
and the system prompt's full text at the end. Every line is made inert
(``terminal_text``): names, ids, models and texts come from the session file.
"""

from __future__ import annotations

from agent_tui.config import Resolved
from agent_tui.projection.context import Projection
from agent_tui.projection.rows import build_panel_model
from agent_tui.terminal_text import visible, visible_line


def render_context(projection: Projection, name: str, resolved: Resolved) -> str:
    """The rows for the model the next run would call (``config.resolve``: its window, from the
    table or the config file's ``[models]``)."""
    model_name = resolved.name
    panel = build_panel_model(projection, resolved.info, model_name)
    lines = [
        f"# {name}",
        f"# leaf {projection.leaf_id}  model {model_name}  thinking {projection.thinking_level}",
    ]
    if projection.compaction_id:
        lines.append(
            f"# compaction {projection.compaction_id}: {len(projection.summarized_ids)} entries summarized"
        )
    lines.append(f"{'#':>5}  {'role':<10} {'entry':<10} {'status':<18} {'tokens':>7}  text")
    for row in panel.rows:
        number = str(row.number) if row.number is not None else "-"
        lines.append(
            f"{number:>5}  {row.role:<10} {row.source_id or '':<10} {row.status:<18} {row.tokens:>7}  {row.text}"
        )
    percent = 100 * panel.total / panel.window if panel.window else 0
    lines.append(f"total ≈ {panel.total:,} tokens of {panel.window:,} ({percent:.1f}%) = {panel.context}")
    for repair in panel.repairs:
        lines.append(f"repair: {repair}")
    out = "".join(visible_line(line) + "\n" for line in lines)  # every field quotes the session
    if panel.prepared is not None and panel.prepared.system:
        system = panel.prepared.system
        out += f"\n## system prompt ({len(system):,} characters)\n{visible(system)}\n"
    return out
