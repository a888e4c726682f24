"""The footer of key hints: Textual's ``Footer``, recomposed only when what it shows changes.

Textual's footer rebuilds all its keys on every bindings signal (each focus change), and a
rebuild restyles every key (~25 ms each time at start, eight times before the first frame);
the keys it shows change far less often than focus does.

Keys that do not fit whole beside the palette's key are not shown (Textual's footer cut the last
one at the edge: "^o R" at 80 columns with the tree focused); a resize shows them again.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer


class KeyFooter(Footer):
    _shown: tuple[Any, ...] | None = None

    def _signature(self) -> tuple[Any, ...]:
        """What compose would show: each shown binding's key, label, action and state."""
        return tuple(
            (
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                enabled,
                tooltip,
            )
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == self.app.COMMAND_PALETTE_BINDING
        )

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._signature()
            self.call_after_refresh(self._fit)
        yield from super().compose()

    def on_resize(self) -> None:
        self._fit()

    def _width(self, child: Widget) -> int:
        return (
            child.get_content_width(self.size, self.app.size)
            + child.styles.gutter.width
            + child.styles.margin.width
        )

    def _fit(self, tries: int = 10) -> None:
        """Show the keys, in order, while they fit whole beside the palette's key; hide the rest."""
        if not self.is_attached or not self.size.width:
            return
        children = list(self.children)
        docked = [c for c in children if c.has_class("-command-palette")]
        if any(not c.outer_size.width for c in docked):  # not laid out yet: its measure is not its width
            if tries:
                self.call_after_refresh(self._fit, tries - 1)
            return
        room = self.size.width - sum(c.outer_size.width for c in docked)
        used = 0
        for child in children:
            if child in docked:
                continue
            laid_out = child.display and child.outer_size.width
            used += child.outer_size.width if laid_out else self._width(child)
            fits = used - 1 <= room  # a key's last column is a blank the palette's border may cover
            if child.display != fits:
                child.display = fits

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self._signature() != self._shown:
            await self.recompose()
            self._fit()
