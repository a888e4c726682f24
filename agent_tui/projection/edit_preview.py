"""What hide / replace / restore / pin would do to one entry's next request, in figures.

The panel shows these lines for the entry selected in the tree, and the replace
editor counts its text with :meth:`EditPreview.replace_count`. Each figure is the
real projection of the session set beside :func:`~agent_tui.projection.preview.hypothetical`
with a draft of the entry the action would append (``Session.draft``: never written).
No Textual here: the app builds one :class:`EditPreview` per projection and asks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_tui.projection.context import ContextEntry, ProjectedMessage, Projection, Status
from agent_tui.projection.describe import plural
from agent_tui.projection.preview import Change, TokenCount, compare, hypothetical, signed
from agent_tui.projection.tokens import estimate_message, image_rule
from agent_tui.store.errors import StoreError
from agent_tui.store.session import (
    DRAFT_ID,
    Session,
    hide_fields,
    is_editable,
    pin_fields,
    replace_fields,
    restore_fields,
)

COUNTING = "counting the context…"


@dataclass(slots=True)
class EditPreview:
    """The previews of one projection of ``session``.

    ``total`` is the context total the panel shows for ``projection`` (None while the panel is
    still counting it); ``count`` counts one message as the panel does (its cache)."""

    session: Session
    projection: Projection
    total: int | None
    count: TokenCount
    #: everything estimated (``rows.PanelModel.estimated``): an edit voids the reported usage, so the
    #: figure after one starts from this, not from ``total`` (None: the same as ``total``)
    estimated: int | None = None
    _active: set[str] | None = field(default=None, init=False)
    _cut: set[str] | None = field(default=None, init=False)

    def _on_active_path(self, entry_id: str) -> bool:
        if self._active is None:
            self._active = {e.id for e in self.projection.path}
        return entry_id in self._active

    def _cut_ids(self) -> set[str]:
        """What the latest compaction on the branch cuts: summarized, or pinned back into view."""
        if self._cut is None:
            ids = set(self.projection.summarized_ids)
            ids.update(
                ce.entry.id for ce in self.projection.entries if (ce.origin or ce.status) is Status.PINNED
            )
            self._cut = ids
        return self._cut

    def _count(self, ce: ContextEntry, position: int, m: ProjectedMessage) -> int:
        """Tokens of a message as the panel counts it (a draft's edit is counted, not cached)."""
        if ce.edit_id == DRAFT_ID:
            return estimate_message(m.message, image_rule(self.projection.model))
        return self.count(ce, position, m)

    def change(self, action: str, target_id: str, text: str | None = None) -> Change | str:
        """What ``action`` (hide, replace, restore, pin, unpin) on ``target_id`` would change in the
        next request. A string says why there is no figure."""
        index = self.session.index
        entry = index.by_id.get(target_id)
        if entry is None:
            return f"no entry {target_id}"
        if self.total is None:
            return COUNTING
        if action in ("hide", "replace", "restore"):
            if not is_editable(entry):
                what = f"{entry.type} ({entry.role})" if entry.role else entry.type
                return f"a {what} entry has no model content"
            if not self._on_active_path(target_id):
                return "not on the active branch (the next request is built from that one)"
            if action == "hide":
                fields = hide_fields(entry)
            elif action == "restore":
                fields = restore_fields(entry)
            else:
                fields = replace_fields(entry, text or "")
        else:
            if target_id not in self._cut_ids():
                # pins are read only for what a compaction cuts: elsewhere a pin changes nothing
                # in the request (and the full projection a pin needs would be spent for nothing)
                return Change(self.total, self.total)
            fields = pin_fields(target_id, action == "pin")
        if index.leaf_id != self.projection.leaf_id:
            # entries arrived (a reply is streaming) and the view has not caught up: a draft would
            # hang below the new leaf, not below the projection it is compared with
            return "the session is changing; the figures follow when the view catches up"
        try:
            draft = self.session.draft(fields)
        except (ValueError, StoreError) as e:
            return str(e)
        after = hypothetical(self.projection, draft)
        if fields.get("type") == "context_edit" and self.estimated is not None:
            # after the edit the figure is all estimated (the reported usage predates it)
            change = compare(self.projection, after, self.estimated, self._count)
            change.estimated_before = self.estimated
            change.tokens_before = self.total
            return change
        return compare(self.projection, after, self.total, self._count)

    def tokens_now(self, target_id: str) -> int:
        """What ``target_id`` costs in the next request now (0 if it is not in view)."""
        for ce in self.projection.entries:
            if ce.entry.id == target_id and ce.messages:
                return sum(self._count(ce, i, m) for i, m in enumerate(ce.messages))
        return 0

    def lines(self, target_id: str) -> list[str]:
        """One line per action on ``target_id``, in figures (the panel shows them)."""
        index = self.session.index
        lines: list[str] = []
        entry = index.get(target_id)
        if self.session.read_only:
            lines.append("read-only session: the actions are refused; what they would do:")
        hide = self.change("hide", target_id)
        if isinstance(hide, str):
            lines.append(f"hide / replace / restore {target_id}: {hide}")
        else:
            lines.append(hide.describe("hide", target_id))
            now = self.tokens_now(target_id)
            lines.append(
                f"replace {target_id}: {plural(now, 'token') + ' now' if now else 'not in view now'} "
                "(the editor counts as you type)"
            )
            restore = self.change("restore", target_id)
            lines.append(restore.describe("restore", target_id) if isinstance(restore, Change) else restore)
        action = "unpin" if index.is_pinned(target_id) else "pin"
        pin = self.change(action, target_id)
        if isinstance(pin, str):
            lines.append(f"{action} {target_id}: {pin}")
        else:
            line = pin.describe(action, target_id)
            if pin.unchanged and self.projection.compaction_id is None and entry.type != "compaction":
                line += " (pins act at compaction)"
            lines.append(line)
        return lines

    def replace_count(self, target_id: str, text: str) -> str:
        """The editor's live line: the replacement's tokens against what the entry costs now, and
        the context total before → after."""
        change = self.change("replace", target_id, text)
        if isinstance(change, str):
            return change
        now = self.tokens_now(target_id)
        own = change.delta  # the entry's own difference (the figure may also lose its reported usage)
        line = (
            f"replacement {plural(now + own, 'token')} (now {now:,}, {signed(own)}) · {change.context_text()}"
        )
        return "; ".join([line, *change.notes(target_id)])
