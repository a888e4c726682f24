"""A session header's ``cwd`` decides nothing: ``!cmd``, ``@`` attachments, Tab completion and the
file index all use the folder agent-tui was started in; an imported transcript's ``cwd`` of ``/``
spelled another way (``//``, ``/..``) is refused like ``/``. (Issue 24, finding 4.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_tui.library.importers import convert
from agent_tui.store.session import Session
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = pytest.mark.timeout(60)


def hostile_folder(tmp_path: Path) -> Path:
    """The folder a hostile session names: a Makefile that leaves a marker, a file to attach."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "Makefile").write_text(f"all:\n\ttouch {tmp_path / 'MADE'}\n")
    (folder / "secret.txt").write_text("hostile secret\n")
    return folder


def header_values(tmp_path: Path) -> list[str]:
    return [str(tmp_path / "hostile"), "/", "//", "/..", "../..", str(tmp_path / "hostile") + "//"]


# Each spelling is an app of its own (about 2 s): the edit loop keeps the absolute path.
@pytest.mark.parametrize("index", [0, *(pytest.param(i, marks=pytest.mark.slow) for i in range(1, 6))])
async def test_bang_commands_and_mentions_use_the_folder_agent_tui_was_started_in(
    tmp_path: Path, index: int
) -> None:
    hostile = hostile_folder(tmp_path)
    header = header_values(tmp_path)[index]
    project = tmp_path / "project"
    project.mkdir()
    (project / "here.txt").write_text("project file\n")
    with Session.create(tmp_path / "handed", "/") as s:
        s.append({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}})
    lines = s.path.read_text().splitlines()
    first = json.loads(lines[0])
    first["cwd"] = header  # as a hostile file spells it (Session.create would normalize it)
    s.path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    app = make_app(tmp_path, s.path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # @ and Tab: the project's files, never the header's folder
        assert app.composer.root() == project
        assert getattr(app.composer.file_index, "root", None) == project
        relative = os.path.relpath(hostile / "secret.txt", "/")  # "@tmp/.../secret.txt" from "/"
        for mention in ("@secret.txt", f"@{relative}", "@here.txt"):
            composed = await app.composer_actions._compose(f"look {mention}", [])
            blocks = json.dumps(composed)
            assert "hostile secret" not in blocks, (header, mention)
        assert "project file" in json.dumps(await app.composer_actions._compose("look @here.txt", []))
        history = tmp_path / "history.jsonl"
        app.composer_actions.history.path = history  # the prompt history names the folder too
        # !cmd: runs in the project
        for command in ("!pwd", "!make"):
            app.composer.set_text(command)
            await pilot.press("enter")

            def ran(c: str = command) -> bool:
                return app.session is not None and any(
                    e.get("message", {}).get("command") == c[1:]
                    for e in map(json.loads, app.session.path.read_text().splitlines()[1:])
                )

            await wait_for(pilot, ran, command)
        runs = [
            e["message"]
            for e in map(json.loads, app.session.path.read_text().splitlines()[1:])  # type: ignore[union-attr]
            if e.get("message", {}).get("role") == "bashExecution"
        ]
        assert runs[0]["output"].strip() == str(project)
        assert not (tmp_path / "MADE").exists()  # the hostile Makefile never ran
        assert runs[1]["exitCode"] != 0  # the project has no Makefile
        kept = [json.loads(line) for line in history.read_text().splitlines()]
        assert [(k["text"], k["cwd"]) for k in kept] == [("!pwd", str(project)), ("!make", str(project))]


CLAUDE_LINE = {
    "type": "user",
    "uuid": "11111111-1111-1111-1111-111111111111",
    "parentUuid": None,
    "sessionId": "s1",
    "timestamp": "2025-08-14T09:12:10.259Z",
    "message": {"role": "user", "content": "hello"},
}


@pytest.mark.parametrize("recorded", ["/", "//", "///", "/..", "//..", "/./", "//tmp/..", "/\0x"])
def test_an_imported_cwd_naming_the_root_any_way_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: str
) -> None:
    monkeypatch.chdir(tmp_path)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({**CLAUDE_LINE, "cwd": recorded}) + "\n")
    result = convert(transcript)
    assert result.cwd == str(tmp_path), recorded
    assert result.cwd_note is not None


def test_an_imported_cwd_is_kept_normalized(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({**CLAUDE_LINE, "cwd": "//home/dev/./shop/"}) + "\n")
    assert convert(transcript).cwd == "/home/dev/shop"
