"""The app's stylesheet re-parses only CSS it has not parsed with the same variables."""

from __future__ import annotations

import inspect
import uuid

import pytest
from textual.css import stylesheet as textual_stylesheet
from textual.css.stylesheet import Stylesheet

from agent_tui.tui.kept_css import KeptParseStylesheet


def _textual_parse_rules() -> object:
    """Textual's own ``Stylesheet._parse_rules``, not the tests' shared one (tests/support/textual_css.py),
    which would answer from what any stylesheet parsed before."""
    method = Stylesheet._parse_rules
    if getattr(method, "_shared", False):
        return inspect.getclosurevars(method).nonlocals["original"]
    return method


@pytest.fixture
def css() -> str:
    """A CSS text of this test's own."""
    return f"/* {uuid.uuid4()} */ Widget {{ color: $fg; }} Static {{ background: $bg; }}"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CSS texts Textual's parser is run on."""
    monkeypatch.setattr(Stylesheet, "_parse_rules", _textual_parse_rules())
    seen: list[str] = []
    real = textual_stylesheet.parse  # type: ignore[attr-defined]

    def counting(scope, css, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(css)
        return real(scope, css, *args, **kwargs)

    monkeypatch.setattr(textual_stylesheet, "parse", counting)
    return seen


def _sheet(css: str, variables: dict[str, str]) -> KeptParseStylesheet:
    sheet = KeptParseStylesheet(variables=variables)
    sheet.add_source(css, read_from=("test.tcss", ""))
    sheet.parse()
    return sheet


def test_a_reparse_with_the_same_variables_parses_nothing_again(css: str, parses: list[str]) -> None:
    sheet = _sheet(css, {"fg": "red", "bg": "blue"})
    sheet.reparse()
    sheet.set_variables({"fg": "red", "bg": "blue"})  # what App.refresh_css does at every call
    sheet.reparse()
    assert parses == [css]
    assert len(sheet.rules) == 2


def test_new_variables_are_parsed_into_the_rules(css: str, parses: list[str]) -> None:
    sheet = _sheet(css, {"fg": "red", "bg": "blue"})
    sheet.set_variables({"fg": "green", "bg": "blue"})
    sheet.reparse()
    assert parses == [css, css]
    color = sheet.rules[0].styles.color
    assert (color.r, color.g, color.b) == (0, 128, 0)


def test_a_source_added_later_is_parsed_once(css: str, parses: list[str]) -> None:
    sheet = _sheet(css, {"fg": "red", "bg": "blue"})
    more = f"/* {uuid.uuid4()} */ Label {{ color: $fg; }}"
    sheet.add_source(more, read_from=("more.tcss", ""))
    sheet.reparse()
    sheet.reparse()
    assert parses == [css, more]
    assert len(sheet.rules) == 3
