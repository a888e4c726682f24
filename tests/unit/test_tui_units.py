"""The TUI's pure helpers: markdown block splitting, slash commands, theme files, the panel's token
cache, the streaming tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.store.content import edit_diff
from agent_tui.tui.commands import COMMANDS, parse_slash
from agent_tui.tui.settings import read_theme, write_theme
from agent_tui.tui.themes import DEFAULT_THEMES_DIR, ThemeFileError, load_theme, load_themes
from agent_tui.tui.widgets.context_panel import meter
from agent_tui.tui.widgets.reply_blocks import BIG_FENCE_LINES, split_blocks, stable_length


def test_stable_length_stops_before_an_open_fence_and_an_unfinished_line() -> None:
    text = "First paragraph.\n\n```python\nx = 1\n"
    assert text[: stable_length(text)] == "First paragraph.\n\n"
    closed = text + "```\nmore"
    assert closed[: stable_length(closed)] == "First paragraph.\n\n```python\nx = 1\n```\n"
    assert stable_length("no newline yet") == 0


def test_split_blocks_takes_only_long_fences_out_of_the_markdown() -> None:
    short = "```\na\n```\n"
    long = "```python\n" + "x\n" * (BIG_FENCE_LINES + 1) + "```\n"
    parts = split_blocks("Intro.\n\n" + short + "\n" + long + "\nAfter.\n\n")
    assert [kind for kind, _ in parts] == ["md", "code", "md"]
    assert parts[0][1] == "Intro.\n\n" + short + "\n"
    assert parts[1][1] == long
    assert "".join(text for _, text in parts) == "Intro.\n\n" + short + "\n" + long + "\nAfter.\n\n"


def test_parse_slash() -> None:
    assert parse_slash("/hide a1") == ("hide", "a1")
    assert parse_slash("  /compact keep the tests ") == ("compact", "keep the tests")
    assert parse_slash("//not a command") is None
    assert parse_slash("/etc/hosts is odd") is None
    assert parse_slash("plain text") is None
    assert len({c.name for c in COMMANDS}) == len(COMMANDS)


def test_packaged_themes_load_dark_and_light() -> None:
    themes, errors = load_themes(DEFAULT_THEMES_DIR)
    assert errors == []
    by_name = {t.name: t for t in themes}
    assert by_name["agent-dark"].dark is True
    assert by_name["agent-light"].dark is False


def test_a_bad_theme_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("name = 'x'\n")
    (tmp_path / "notoml.toml").write_text("name = \n")
    themes, errors = load_themes(tmp_path)
    assert themes == [] and len(errors) == 2
    with pytest.raises(ThemeFileError, match="primary"):
        load_theme(tmp_path / "broken.toml")


def test_write_theme_keeps_every_other_line(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    write_theme(path, "agent-light")
    assert read_theme(path) == "agent-light"
    path.write_text('provider = "openai"\ntheme = "old"\n\n[openai]\ntheme = "not this one"\n')
    write_theme(path, "agent-dark")
    text = path.read_text()
    assert text == 'provider = "openai"\ntheme = "agent-dark"\n\n[openai]\ntheme = "not this one"\n'
    assert read_theme(path) == "agent-dark"
    # a comment on the line, a file that starts with a table, a multi-line value: all kept
    path.write_text('# mine\nmodel = """a\ntheme = "inside a string"\n"""\n[retry]\nmax_retries = 3\n')
    write_theme(path, "agent-light")
    assert path.read_text() == (
        '# mine\nmodel = """a\ntheme = "inside a string"\n"""\ntheme = "agent-light"\n\n[retry]\nmax_retries = 3\n'
    )
    path.write_text('theme = "agent-dark"  # my favourite\n')
    write_theme(path, "agent-light")
    assert path.read_text() == 'theme = "agent-light"  # my favourite\n'
    broken = 'theme = "agent-dark"\n[retry\n'
    path.write_text(broken)
    with pytest.raises(OSError, match="not valid TOML"):
        write_theme(path, "agent-light")
    assert path.read_text() == broken and read_theme(path) is None


def test_meter_and_edit_diff() -> None:
    assert meter(50, 100, 10) == "█████░░░░░"
    assert meter(500, 100, 4) == "████"
    diff = edit_diff({"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]})
    assert diff is not None and "-x = 1" in diff and "+x = 2" in diff and "a/a.py" in diff


def test_the_panel_fills_the_token_cache_it_is_given(tmp_path: Path) -> None:
    """An empty cache is falsy: `cache or TokenCache()` once replaced the app's cache at every
    refresh, so every message of a big session was estimated again after each append."""
    from agent_tui.projection.context import project
    from agent_tui.projection.models import lookup
    from agent_tui.store.session import Session
    from agent_tui.tui.widgets.context_panel import TokenCache, build_panel_model
    from tests.support.tui_fixtures import sample_session

    with Session.open(sample_session(tmp_path), write=False) as session:
        projection = project(session.index)
    cache = TokenCache()
    first = build_panel_model(projection, lookup("claude-sonnet-4-5"), "m", cache)
    assert len(cache) == len(projection.messages)
    again = build_panel_model(projection, lookup("claude-sonnet-4-5"), "m", cache)
    assert again.total == first.total
