"""Each piece of Textual CSS parsed once per test process, however many apps the tests start.

Textual keeps the rules it parsed per ``Stylesheet``, so every ``App`` a test starts parses every
widget's ``DEFAULT_CSS`` and the app's CSS again: about 50 ms of CPU of a 0.2 s app start, several
seconds of ``make test-fast``. A parse is a function of the text, where it was read from, its flags,
its scope and the CSS variables (the theme): the parsed rules are shared on exactly that key, and
nothing after the parse changes them. A CSS that does not parse raises in every app, as before
(an exception is not kept), and one with errors still fails each app's ``Stylesheet.parse``.
"""

from __future__ import annotations

import inspect
from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet

_PARAMETERS = ["self", "css", "read_from", "is_default_rules", "tie_breaker", "scope"]
_SHARED: dict[tuple[Any, ...], list[RuleSet]] = {}


def share_parsed_css() -> bool:
    """Share the parsed rules between stylesheets; False (and nothing changed) if this Textual's
    ``Stylesheet._parse_rules`` is not the one this was written for."""
    original = Stylesheet._parse_rules
    if getattr(original, "_shared", False):
        return True
    if list(inspect.signature(original).parameters) != _PARAMETERS:
        return False

    def _parse_rules(
        self: Stylesheet,
        css: str,
        read_from: Any,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(sorted(self._variables.items())))
        rules = _SHARED.get(key)
        if rules is None:
            rules = _SHARED[key] = original(self, css, read_from, is_default_rules, tie_breaker, scope)
        return rules

    _parse_rules._shared = True  # type: ignore[attr-defined]
    Stylesheet._parse_rules = _parse_rules  # type: ignore[method-assign]
    return True
