"""The footer of key hints: Textual's ``Footer``, recomposed only when what it shows changes.

Textual's footer rebuilds all its keys on every bindings signal (each focus change), and a
rebuild restyles every key (~25 ms each time at start, eight times before the first frame);
the keys it shows change far less often than focus does."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
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
        yield from super().compose()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self._signature() != self._shown:
            await self.recompose()
