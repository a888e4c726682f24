"""What is on the terminal, as text: to check that a dialog or notice shows its text whole.

:func:`shown_in` reads the cells of a widget's region off the composed screen (what a terminal
would show, after every clip and overlap), one line per row, and joins them with spaces:
:func:`assert_whole` then finds a wrapped text whole, and a text cut anywhere not.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.geometry import Region
from textual.widget import Widget


def screen_lines(app: App[Any]) -> list[str]:
    """The rows of the current screen as a terminal shows them."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def words(text: str) -> str:
    return " ".join(text.split())


def visible_region(app: App[Any], widget: Widget) -> Region:
    """The part of ``widget`` the terminal shows: its region clipped by its containers' and the
    screen's (a hint pushed below a dialog's border has a region, but none of it is visible)."""
    geometry = app.screen._compositor.find_widget(widget)
    return geometry.region.intersection(geometry.clip).intersection(app.screen.region)


def shown_in(app: App[Any], where: Widget | Region) -> str:
    """The text on screen inside ``where`` (a widget's visible region), rows joined by spaces."""
    region = where if isinstance(where, Region) else visible_region(app, where)
    rows = screen_lines(app)[region.y : region.bottom]
    return words(" ".join(row[region.x : region.right] for row in rows))


def assert_whole(app: App[Any], where: Widget | Region, text: str) -> None:
    """``text`` is on screen inside ``where``, every character of it in order, none cut (wrapped
    at a space or, for a word longer than the width, folded within it)."""
    on_screen = shown_in(app, where)
    assert "".join(text.split()) in "".join(on_screen.split()), (
        f"not shown whole:\n  {words(text)!r}\non screen:\n  {on_screen!r}"
    )


def assert_on_screen(app: App[Any], widget: Widget) -> None:
    """The whole of ``widget`` is visible (not pushed out of its dialog or off the terminal)."""
    region = app.screen._compositor.find_widget(widget).region
    visible = visible_region(app, widget)
    assert region.height > 0 and visible == region, f"{widget} at {region}, visible {visible}"


__all__ = ["assert_on_screen", "assert_whole", "screen_lines", "shown_in", "visible_region", "words"]
