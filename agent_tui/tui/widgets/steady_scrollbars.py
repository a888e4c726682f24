"""Scroll views whose scrollbars are redrawn only when their sizes change.

Textual's ``ScrollView._size_updated`` compares the size the compositor passes (the widget's
region) with the widget's own virtual size (its content's): for a long tree or list they always
differ, so every layout of the screen (each flush of a streaming reply) refreshed the tree's and
the panel's scrollbars, and redrew them: about 2 ms each at 50 rows, 3-4 ms of a 20 ms frame.

A function, not a mixin class: Textual gathers a widget's default CSS along the first base of
each class only, so a mixin placed first would drop ``Tree``'s (its cursor line among it).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


def size_updated(
    view: ScrollView, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
) -> bool:
    """``ScrollView._size_updated``, skipped when no size it depends on has changed. Assign it as
    ``_size_updated`` in a ``ScrollView`` subclass that does not override that method."""
    styles = view.styles
    sizes = (
        size,
        virtual_size,
        container_size,
        view.virtual_size,
        styles.gutter,
        styles.overflow_x,
        styles.overflow_y,
        styles.scrollbar_size_vertical,
        styles.scrollbar_size_horizontal,
    )
    if view.__dict__.get("_steady_sizes") == sizes:
        return False  # nothing to resize: no Resize event either
    view.__dict__["_steady_sizes"] = sizes
    return ScrollView._size_updated(view, size, virtual_size, container_size, layout)
