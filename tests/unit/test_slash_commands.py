"""``agent.slash_commands``: what a typed ``/name args`` is outside the app (the built-in commands by
the app's names, then templates and skills, else text), split as the app splits it."""

from __future__ import annotations

from agent_tui.agent import slash_commands
from agent_tui.agent.app_commands import NAMES as APP_COMMANDS
from agent_tui.agent.resources import Resources
from agent_tui.agent.slash_commands import Command, listed, parse
from agent_tui.agent.templates import Template
from agent_tui.tui.commands import BY_NAME, parse_slash


def resources() -> Resources:
    review = Template("review", "Review a file", "FILE", "Review $1 briefly.", "/p/review.md")
    return Resources(templates={"review": review})


def test_builtins_templates_and_plain_text() -> None:
    r = resources()
    assert parse("/compact  keep the API notes ", r) == Command("compact", "keep the API notes")
    assert parse("/rename", r) == Command("rename", "")
    assert parse("/review app.py", r) == "Review app.py briefly."
    for text in ("hello", "//compact", "/etc/hosts", "/", "/resume", "/nosuch x"):
        assert parse(text, r) is None, text  # sent as typed (the app's other commands need a screen)


def test_the_split_is_the_apps() -> None:
    for text in ("/compact focus", "//x", "/etc/hosts", "/a  b c ", "plain", "/"):
        app = parse_slash(text)
        assert slash_commands.split(text) == (None if app is None else (app[0], app[1].strip())), text


def test_the_builtins_are_app_commands_and_listed_first() -> None:
    assert slash_commands.BUILTIN_NAMES <= APP_COMMANDS
    assert all(name in BY_NAME for name in slash_commands.BUILTIN_NAMES)
    names = [c.name for c in listed(resources())]
    assert names == [
        "compact",
        "rename",
        "session",
        "model",
        "thinking",
        "agents",
        "permissions",
        "restore",
        "review",
    ]
    assert [c.source for c in listed(resources())][-1] == "prompt"
