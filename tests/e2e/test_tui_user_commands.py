"""The user's prompt templates and skills in the app: listed by the ``/`` completion and the help
screen, expanded on Enter (the session gets the expansion, the history what was typed), the
built-in winning a name, loading problems as one line each, ``/session`` and the panel naming
the files. The files live in the test's own home and project folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_tui.agent.resources import Loading, load_resources
from agent_tui.tui.commands import NAMES
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.text_view import TextViewScreen
from agent_tui.tui.widgets.completion_menu import CompletionMenu
from tests.support.files import write
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = pytest.mark.timeout(60)


async def type_text(pilot: Pilot[None], value: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", ":": "colon"}.get(c, c) for c in value])


def user_files(tmp_path: Path) -> Loading:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir(exist_ok=True)
    write(
        project / ".agent-tui/prompts/review.md",
        "---\ndescription: Review [bold]a file[/bold]\nargument-hint: <path>\n---\nReview $1 for ${2:-bugs}.",
    )
    write(project / ".claude/commands/rename.md", "a template named like a built-in")
    write(
        home / ".agents/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Ship it.\n---\nRun make ship.",
    )
    write(home / ".claude/skills/broken/SKILL.md", "---\nname: [\n---\n")
    write(project / "AGENTS.md", "Use tabs.")
    write(project / ".pi/prompts/empty.md", "---\ndescription: nothing\n---\n")
    return Loading(
        lambda: load_resources(  # a trusted folder: its own templates load
            project, tmp_path / "config", reserved=NAMES, env={"HOME": str(home)}, trust_project=True
        )
    )


@pytest.mark.slow  # the app through a dozen steps: 1.4 s of CPU, 2.5-5 s wall
async def test_templates_and_skills_complete_expand_and_show_in_help_and_session(tmp_path: Path) -> None:
    factory = ScriptedFactory()
    app = make_app(tmp_path, None, agent_factory=factory, resources=user_files(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        menu = app.query_one(CompletionMenu)

        def commands() -> list[str]:
            source = app.composer.commands_source
            return [row[0] for row in source()] if source is not None else []

        assert "compact" in commands()  # the app's own, at once
        await wait_for(pilot, lambda: "review" in commands(), "the user's commands")
        await type_text(pilot, "/rev")
        assert menu.shown and [c.label for c in menu.candidates] == ["/review <path>"]
        assert menu.candidates[0].detail == "Review [bold]a file[/bold]"  # shown as typed, never markup
        await pilot.press("escape")
        app.composer.set_text("")
        await type_text(pilot, "/skill:")
        assert [c.insert for c in menu.candidates] == ["/skill:deploy "]
        await pilot.press("escape")

        app.composer.set_text('/review src/x.py "error handling"')
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(factory.turns[0].prompts) == 1, "the turn")
        assert factory.turns[0].prompts == ["Review src/x.py for error handling."]
        assert app.prompt_history.entries[-1] == '/review src/x.py "error handling"'

        app.composer.set_text("/skill:deploy now")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(factory.turns[0].prompts) == 2, "the skill turn")
        sent = factory.turns[0].prompts[1]
        assert sent.startswith('<skill name="deploy"') and "Run make ship." in sent and sent.endswith("now")

        app.composer.set_text("/empty")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("expands to nothing" in n for n in notices(app)), "the notice")
        assert app.composer.text == "/empty" and len(factory.turns[0].prompts) == 2  # kept, not sent

        # The built-in /rename wins its name: the template is not sent, the session is renamed.
        app.composer.set_text("/rename Release work")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.index.name == "Release work", "the rename")
        assert len(factory.turns[0].prompts) == 2

        app.show_help()
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert isinstance(app.screen, HelpScreen)
        rows = {(r.section, r.keys) for r in app.screen.rows}
        assert ("Prompt templates", "/review <path>") in rows and ("Skills", "/skill:deploy [ARGS]") in rows
        await pilot.press("escape")

        await app.run_slash("session", "")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "/session")
        assert isinstance(app.screen, TextViewScreen)
        text = app.screen.text
        assert "prompt templates (2): /review, /empty" in text and "skills (1): deploy" in text
        assert "rename.md: skipped: /rename is a built-in command" in text
        assert "broken/SKILL.md: skipped" in text
        assert f"context files: {tmp_path / 'project' / 'AGENTS.md'}" in text
        await pilot.press("escape")
        assert "2 templates · 1 skill" in app.panel.sources


async def test_each_loading_problem_is_one_notification_line(tmp_path: Path) -> None:
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(), resources=user_files(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len([n for n in notices(app) if "skipped" in n]) >= 2, "the warnings")
        problems = [line for line in notices(app) if "skipped" in line]
        assert len(problems) == 2 and all("\n" not in line for line in problems)
