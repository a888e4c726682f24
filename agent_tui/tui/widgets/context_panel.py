"""The live "what the model sees" panel: the next request's messages, with provenance and tokens.

One row per projected message (role, source entry, status, estimated tokens,
first line), plus rows for hidden entries, the folded range a compaction
summarized, the tool definitions, and the repairs that make the request
valid. A header shows the total against the model's context window with a
meter. Rows live in an ``OptionList``, which stays fast with 20,000 of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from agent_tui.projection.compaction import context_line
from agent_tui.projection.context import ProjectedMessage, Projection, Status
from agent_tui.projection.describe import first_line, message_first_line
from agent_tui.projection.models import ModelInfo
from agent_tui.projection.request import Prepared, prepare
from agent_tui.projection.tokens import estimate_message, estimate_tools
from agent_tui.store.record import Entry
from agent_tui.terminal_text import visible, visible_line
from agent_tui.tui.widgets.row_list import RowList

METER_WIDTH = 24

_STATUS_COLOUR = {
    Status.HIDDEN: "error",
    Status.REPLACED: "warning",
    Status.RESTORED: "success",
    Status.SUMMARY: "accent",
    Status.AFTER_COMPACTION: "foreground",
    Status.KEPT: "foreground",
}


@dataclass(slots=True)
class PanelRow:
    """One line of the panel; ``source_id`` is None for the tools and notes.

    The preview text is worked out when the row is first drawn (``entry`` or
    ``message`` say where from), so 20,000 rows cost only their token counts.
    """

    role: str
    source_id: str | None
    status: str
    tokens: int
    note: str | None = None
    number: int | None = None
    entry: Entry | None = None
    message: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        if self.note is None:
            if self.entry is not None:
                self.note = visible_line(first_line(self.entry, 80))
            elif self.message is not None:
                self.note = visible_line(message_first_line(self.message, 80))
            else:
                self.note = ""
        return self.note


@dataclass(slots=True)
class PanelModel:
    rows: list[PanelRow]
    total: int
    window: int
    model_name: str
    thinking: str
    repairs: list[str] = field(default_factory=list)
    prepared: Prepared | None = None
    context: str = ""  # the figure compaction decides on, as `agent-tui context --format text` prints it
    projection: Projection | None = None  # what the rows were built from

    @property
    def message_rows(self) -> list[PanelRow]:
        return [r for r in self.rows if r.number is not None]


class TokenCache:
    """Estimates by (entry, edit, position): an action changes few entries, so most are reused."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str | None, int], int] = {}

    def get(self, key: tuple[str, str | None, int], message: ProjectedMessage) -> int:
        value = self._cache.get(key)
        if value is None:  # only now is the message decoded, if it was not yet
            value = estimate_message(message.message)
            self._cache[key] = value
        return value

    def clear(self) -> None:
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


def build_panel_model(
    projection: Projection, info: ModelInfo, model_name: str, cache: TokenCache | None = None
) -> PanelModel:
    if cache is None:  # (not `cache or ...`: an empty cache is falsy, and the caller's must fill)
        cache = TokenCache()
    rows: list[PanelRow] = []
    total = 0
    number = 0
    if projection.summarized_ids:
        rows.append(
            PanelRow(
                "-",
                projection.compaction_id,
                "summarized",
                0,
                f"{len(projection.summarized_ids)} earlier entries folded into the summary below",
            )
        )
    for ce in projection.entries:
        if not ce.messages:
            if ce.status is Status.HIDDEN:
                rows.append(
                    PanelRow(
                        "-",
                        ce.entry.id,
                        "hidden",
                        0,
                        visible_line(f"(hidden by {ce.edit_id}) {first_line(ce.entry, 60)}"),
                    )
                )
            continue
        for position, m in enumerate(ce.messages):
            number += 1
            tokens = cache.get((m.source_id, ce.edit_id, position), m)
            total += tokens
            status = m.status.value + (f" ({m.kind})" if m.kind != m.role else "")
            if ce.entry.type == "message" and m.status is not Status.REPLACED:
                rows.append(PanelRow(m.role, m.source_id, status, tokens, None, number, entry=ce.entry))
            else:
                rows.append(PanelRow(m.role, m.source_id, status, tokens, None, number, message=m.message))
    prepared = prepare(projection.messages)
    tool_tokens = estimate_tools(prepared.tools)
    if tool_tokens:
        total += tool_tokens
        rows.append(PanelRow("tools", None, "", tool_tokens, f"{len(prepared.tools)} tool definitions"))
    return PanelModel(
        rows,
        total,
        info.context_window,
        model_name,
        projection.thinking_level,
        prepared.repairs,
        prepared,
        context_line(projection, info.context_window),
        projection,
    )


def meter(total: int, window: int, width: int = METER_WIDTH) -> str:
    fraction = min(total / window, 1.0) if window else 0.0
    filled = round(fraction * width)
    return "█" * filled + "░" * (width - filled)


class ContextPanel(Vertical):
    """The model's view of the active branch; the app calls :meth:`show` after every change."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        f"context-panel--{c}" for c in ("accent", "warning", "error", "success")
    }

    DEFAULT_CSS = """
    ContextPanel > .context-panel--accent { color: $accent; }
    ContextPanel > .context-panel--warning { color: $warning; }
    ContextPanel > .context-panel--error { color: $error; }
    ContextPanel > .context-panel--success { color: $success; }
    ContextPanel { height: 1fr; }
    ContextPanel > #context-summary { height: auto; padding: 0 1; }
    ContextPanel > RowList { height: 1fr; }
    ContextPanel > #context-repairs { height: auto; max-height: 4; padding: 0 1; color: $warning; }
    ContextPanel > #context-preview {
        height: auto; max-height: 7; padding: 0 1; border-top: solid $secondary 50%;
    }
    """

    class EntryHighlighted(Message):
        def __init__(self, entry_id: str | None) -> None:
            super().__init__()
            self.entry_id = entry_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: PanelModel | None = None
        self.folding: set[str] = set()  # a compaction preview: entries it would summarize
        self.edit_preview: list[str] = []  # what an edit of the selected entry would change

    def compose(self) -> ComposeResult:
        yield Static(id="context-summary", markup=False)
        yield RowList(id="context-rows")
        yield Static(id="context-repairs", markup=False)
        preview = Static(id="context-preview", markup=False)
        preview.display = False
        yield preview

    @property
    def rows_list(self) -> RowList:
        return self.query_one("#context-rows", RowList)

    def show(self, model: PanelModel) -> None:
        self.model = model
        percent = 100 * model.total / model.window if model.window else 0.0
        summary = Text()
        summary.append(visible_line(model.model_name), style=Style(bold=True))
        summary.append(f" · thinking {visible_line(model.thinking)}\n")
        colour = "error" if percent >= 90 else "warning" if percent >= 70 else "success"
        summary.append(meter(model.total, model.window), style=self._colour(colour))
        summary.append(f" {model.total:,} / {model.window:,} tokens ({percent:.1f}%)")
        summary.append(f"\n{len(model.message_rows)} messages")
        if model.context:
            summary.append(f"\n{visible(model.context)}", style=Style(dim=True))
        self.query_one("#context-summary", Static).update(summary)
        rows = model.rows
        self.rows_list.set_rows(len(rows), lambda i: self._row_text(rows[i]))
        repairs = self.query_one("#context-repairs", Static)
        repairs.update(Text("\n".join(f"repair: {visible_line(r)}" for r in model.repairs)))
        repairs.display = bool(model.repairs)

    def show_pending(self, messages: int) -> None:
        """A placeholder while a big session's tokens are counted in the background."""
        self.query_one("#context-summary", Static).update(
            Text(f"counting the tokens of {messages:,} messages…")
        )
        self.rows_list.set_rows(0, lambda i: Text(""))

    def _colour(self, name: str) -> Style:
        """The colour of the ``context-panel--NAME`` component class (the theme's, through the CSS)."""
        return self.get_component_rich_style(f"context-panel--{name}", partial=True)

    def show_edit_preview(self, title: str, lines: list[str]) -> None:
        """What hide / replace / restore / pin would do to the selected entry (no lines: hidden)."""
        self.edit_preview = lines
        preview = self.query_one("#context-preview", Static)
        text = Text()
        if lines:
            text.append(visible_line(title), style=Style(bold=True))
            for line in lines:
                text.append("\n" + visible_line(line))
        preview.update(text)
        preview.display = bool(lines)

    def preview_fold(self, entry_ids: set[str]) -> None:
        """Mark the rows a compaction would fold into its summary (an empty set clears it)."""
        self.folding = entry_ids
        self.rows_list.redraw()

    def _row_text(self, row: PanelRow) -> Text:
        number = f"{row.number:>4}" if row.number is not None else "   -"
        if row.source_id is not None and row.source_id in self.folding:
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append(f"{number} {visible_line(row.role):<9} {visible_line(row.source_id):<8} ")
            text.append(f"{'→ summary':<16}", style=self._colour("accent") + Style(bold=True))
            text.append(f" {row.tokens:>6}  ", style=Style(dim=True))
            text.append(row.text, style=Style(dim=True))
            return text
        status_key = row.status.split(" ")[0]
        colour = next((c for s, c in _STATUS_COLOUR.items() if s.value == status_key), None)
        style = self._colour(colour) if colour and colour != "foreground" else Style()
        if status_key in ("hidden", "summarized"):
            style += Style(dim=True)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(
            f"{number} {visible_line(row.role):<9} {visible_line(row.source_id or ''):<8} ",
            style=Style(dim=status_key == "hidden"),
        )
        text.append(f"{visible_line(row.status):<16}", style=style)
        text.append(f" {row.tokens:>6}  ", style=Style(dim=True))
        text.append(row.text, style=Style(dim=True) if status_key in ("hidden", "summarized") else Style())
        return text

    def row_lines(self) -> list[str]:
        """Each row as plain text, as shown (for tests)."""
        return [self._row_text(r).plain for r in self.model.rows] if self.model else []

    def redraw(self) -> None:
        if self.model is not None:
            self.show(self.model)

    @on(RowList.Highlighted)
    def _highlighted(self, event: RowList.Highlighted) -> None:
        event.stop()
        if self.model is None or event.index >= len(self.model.rows):
            return
        self.post_message(self.EntryHighlighted(self.model.rows[event.index].source_id))
