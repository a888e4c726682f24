"""The tests' shared CSS parse (tests/support/textual_css.py): one parse per text, origin and theme
(another theme's variables are parsed on their own), and a broken CSS failing in every stylesheet."""

from __future__ import annotations

import pytest
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from textual.css.tokenizer import TokenError

from tests.support.textual_css import share_parsed_css

CSS = "Static { color: $accent; padding: 1 2; }\n#panel > .row:hover { background: red; }"


def parsed(variables: dict[str, str], css: str = CSS, where: str = "one.tcss") -> Stylesheet:
    sheet = Stylesheet(variables=variables)
    sheet.add_source(css, read_from=(where, ""))
    sheet.parse()
    return sheet


def test_the_installed_textual_is_the_one_it_was_written_for() -> None:
    assert share_parsed_css()  # else the tests parse every app's CSS again (slower, not wrong)


def test_the_same_text_and_theme_share_their_rules_and_another_theme_does_not() -> None:
    share_parsed_css()
    first, second = parsed({"accent": "#ff0000"}), parsed({"accent": "#ff0000"})
    assert first.rules and all(a is b for a, b in zip(first.rules, second.rules, strict=True))
    other = parsed({"accent": "#0000ff"})
    assert all(a is not b for a, b in zip(first.rules, other.rules, strict=True))
    assert first.css != other.css and "#0000FF" in other.css.upper()
    assert parsed({"accent": "#ff0000"}, where="two.tcss").rules[0] is not first.rules[0]


def test_a_broken_css_fails_in_every_stylesheet() -> None:
    share_parsed_css()
    for _ in range(2):
        with pytest.raises(TokenError):
            parsed({}, "Static { color: red; ")  # no closing brace
        with pytest.raises(StylesheetParseError):
            parsed({}, "Static { color: not-a-colour; }")  # parsed, with an error in the rule
