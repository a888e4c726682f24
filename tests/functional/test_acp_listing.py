"""The editor's session list (``session/list`` over ``agent-tui acp``) is a listing: it refreshes
the summaries of the folder's sessions and builds no full-text index, as ``agent-tui sessions``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agent_tui.store.paths import session_dir_for
from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.fake_model_server import FakeModelServer
from tests.support.session_builder import Builder, assistant, header, user

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


async def test_the_editors_session_list_builds_no_text_index(tmp_path: Path, server: FakeModelServer) -> None:
    env = AcpEnv(tmp_path, server)
    folder = env.home / "sessions" / session_dir_for(env.work).name
    folder.mkdir(parents=True)
    for n in range(3):
        b = Builder(lines=[header(f"s-{n}", cwd=str(env.work.resolve()))])
        b.message(user(f"session number {n} about walruses"))
        b.message(assistant("Noted."))
        b.write(folder / f"{n}.jsonl")
    async with env.agent(EditorClient()) as conn:
        listed = await conn.list_sessions(cwd=str(env.work))
    assert sorted(i.session_id for i in listed.sessions) == ["s-0", "s-1", "s-2"]
    (db,) = (env.home / "index").glob("library-v*.sqlite3")
    with sqlite3.connect(db) as index:
        assert index.execute("SELECT count(*) FROM files").fetchone()[0] == 3
        assert index.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0


async def test_the_editors_session_list_prices_as_the_cli_listing_does(
    tmp_path: Path, server: FakeModelServer
) -> None:
    env = AcpEnv(tmp_path, server)
    (tmp_path / "config.toml").write_text(
        '[retry]\nbase_delay = 0.01\n\n[models."house-model"]\nprovider = "openai"\ncost = { input = 1000, output = 0 }\n'
    )
    folder = env.home / "sessions" / session_dir_for(env.work).name
    folder.mkdir(parents=True)
    b = Builder(lines=[header("s-priced", cwd=str(env.work.resolve()))])
    b.message(user("price me"))
    b.message(assistant("Priced.", model="house-model"))  # 10 input tokens at $1,000 per million
    b.write(folder / "priced.jsonl")

    def cost() -> object:
        listed = env.run("sessions", "--json")
        assert listed.returncode == 0, listed.stderr
        return json.loads(listed.stdout)[0]["usage"]["cost"]

    assert cost() == pytest.approx(0.01)
    (db,) = (env.home / "index").glob("library-v*.sqlite3")
    async with env.agent(EditorClient()) as conn:
        await conn.list_sessions(cwd=str(env.work))
    with sqlite3.connect(db) as index:  # the editor's listing priced nothing again, nor otherwise
        (info,) = index.execute("SELECT info FROM files").fetchone()
    assert json.loads(info)["usage"]["cost"] == pytest.approx(0.01)
    assert cost() == pytest.approx(0.01)
