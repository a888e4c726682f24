"""The main screen's compositor: a partial update renders the widgets a changed region touches.

Textual's compositor puts one box around all the regions that changed since the last frame and
renders, whole, every widget that box overlaps. The status line runs the width of the screen, and
its spinner changes ten times a second: in a frame where it changed together with the composer or
the chat, the box took in the tree and the panel too, and both were rendered again, all their
rows (8 ms against 3.6 for a frame without the status line, at 160x50; 7% of the frames while a
reply streamed and keys came). This one renders only the widgets that overlap a changed region.

What is drawn is the same: the update writes only the changed regions' spans, and the pixels
of a span belong to widgets that overlap its region (``tests/e2e/test_tui_region_compositor.py``
compares the screen with Textual's own compositor). It relies on ``Compositor._get_renders`` and
``render_partial_update``, private to Textual 8.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


class RegionCompositor(Compositor):
    """A compositor whose partial updates render only the widgets a changed region overlaps."""

    def __init__(self) -> None:
        super().__init__()
        self._changed: list[Region] = []  # the regions of the partial update being rendered

    def render_partial_update(self) -> ChopsUpdate | None:
        self._changed = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._changed = []

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        changed = self._changed
        if crop is None or len(changed) < 2:
            yield from super()._get_renders(crop)
            return
        for widget, (region, clip) in self.visible_widgets.items():  # front to back
            visible = region.intersection(clip)
            if not any(visible.overlaps(part) for part in changed):
                continue  # no pixel of it is in the update
            # as Textual's: the widget's visible part, whole (its lines are cached)
            yield region, clip, widget.render_lines(visible.translate(-region.offset))
