"""Widgets whose growth costs one layout of the screen, not two.

In a layout, Textual sets each widget's virtual size from the arrangement it has just made; the
virtual size is a reactive that asks for a layout when it changes, so every frame in which the
streaming reply grew (the tail, the reply, the chat) was followed by a second layout that found
nothing to move: 6-8 ms of CPU at 160x50, right after the 15-20 ms of the first, while keys waited.
The arrangement the compositor has just made already holds what the new virtual size would give,
and the scrollbars are updated from it in the same call.

A scrollbar is a widget too: when the chat got a line shorter (the composer grew one), its
scrollbar's new virtual size asked for the same second layout (5 ms at 80x24).
:class:`OneLayoutScrollBar` is the chat's.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.scrollbar import ScrollBar
from textual.widget import Widget


def size_updated(
    widget: Widget, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
) -> bool:
    """``Widget._size_updated`` that stores a new virtual size without asking for another layout.
    Assign it as ``_size_updated`` in a subclass of a widget that does not override that method."""
    return Widget._size_updated(widget, size, virtual_size, container_size, layout=False)


class OneLayoutScrollBar(ScrollBar):
    """A scrollbar whose change of size costs no second layout."""

    _size_updated = size_updated


def vertical_scrollbar(widget: Widget) -> ScrollBar:
    """``widget``'s vertical scrollbar, made as ``Widget.vertical_scrollbar`` makes one but a
    :class:`OneLayoutScrollBar`. For a ``vertical_scrollbar`` property of a widget's own."""
    if widget._vertical_scrollbar is None:
        bar = OneLayoutScrollBar(vertical=True, name="vertical", thickness=widget.scrollbar_size_vertical)
        bar.display = False
        widget._vertical_scrollbar = bar
        widget.app._start_widget(widget, bar)
    return widget._vertical_scrollbar
