"""A session continued with ``-c`` (and a new one, and one given by ``--session``) is in the
session library's index when it closes: the next ``sessions`` listing or search reads no file
again, and finds what was just said."""

from __future__ import annotations

import json
from pathlib import Path

from agent_tui.library.search import Library
from agent_tui.library.search_index import INDEX_VERSION
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.pilot import wait_for
from tests.support.print_env import Env
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session


def index_of(env: Env) -> Path:
    return env.home / "index" / f"library-v{INDEX_VERSION}.sqlite3"


def test_a_print_mode_continue_is_in_the_index_when_it_ends(server: FakeModelServer, tmp_path: Path) -> None:
    env = Env(tmp_path, server)
    server.push(anthropic_stream(text("first answer")))
    assert env.run("-p", "alphaword question").returncode == 0
    assert env.run("sessions").returncode == 0  # the index now exists and holds the session
    server.push(anthropic_stream(text("second answer")))
    continued = env.run("-c", "-p", "zebraword question")
    assert continued.returncode == 0, continued.stderr
    (path,) = env.sessions()

    library = Library([path.parent], db_path=index_of(env))
    try:
        # The row is the file as it is now: a listing and a search have nothing to read again.
        stats = library.refresh(text=True)
        assert (stats.indexed, stats.extended, stats.bytes_read) == (0, 0, 0)
        (summary,) = library.sessions()
        assert summary.entries == len(path.read_text().splitlines()) - 1
        assert [h.session.path for h in library.search("zebraword")] == [str(path)]
    finally:
        library.close()
    listed = env.run("sessions", "--search", "zebraword")
    assert listed.returncode == 0 and str(path) in listed.stdout


def test_no_index_is_made_by_a_session_that_ends(server: FakeModelServer, tmp_path: Path) -> None:
    """Where nothing was ever listed there is no index, and a session's end does not create one."""
    env = Env(tmp_path, server)
    server.push(anthropic_stream(text("an answer")))
    assert env.run("-p", "a question").returncode == 0
    assert not index_of(env).exists()


async def test_the_apps_continue_is_in_the_index_when_the_app_ends(tmp_path: Path) -> None:
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    db = tmp_path / "index.sqlite3"
    with Library([first.parent], db_path=db) as library:
        library.refresh(text=False)  # listed once (the picker, `sessions`): the index exists
    app = make_app(
        tmp_path, None, continue_last=True, search_index=db, agent_factory=ScriptedFactory(reply="quokka")
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session is not None and app.session.path == first, "continued")
        app.composer.set_text("tell me about marsupials")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "quokka" in first.read_text(), "the reply written")
    with Library([first.parent], db_path=db) as library:
        stats = library.refresh(text=True)
        assert (stats.indexed, stats.extended, stats.bytes_read) == (0, 0, 0)
        assert [h.session.path for h in library.search("marsupials")] == [str(first)]
        (summary,) = library.sessions()
        assert summary.entries == sum(
            1 for line in first.read_text().splitlines() if json.loads(line)["type"] != "session"
        )
