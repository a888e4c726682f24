"""Another program appends to the open session (pi takes no lock) or truncates it: the next send
says so in one line naming the file, the app keeps running, the file keeps every byte it had and
the message typed is not lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.test_tui_composer import GateTool, real_agent, type_text
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import make_app

#: The whole app driven key by key for seconds (3.5 s of CPU, 5-14 s wall, loaded): ``make test`` runs them,
#: the edit loop does not.
pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def foreign_label(target: str) -> bytes:
    line = {
        "type": "label",
        "id": "pi000001",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "targetId": target,
        "label": "from pi",
    }
    return json.dumps(line).encode() + b"\n"


@pytest.mark.parametrize("change", ["append", "truncate"])
async def test_a_foreign_change_is_one_line_and_nothing_typed_is_lost(
    tmp_path: Path, server: FakeModelServer, change: str
) -> None:
    server.push(anthropic_stream(text("First answer.")), anthropic_stream(text("Second answer.")))
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, GateTool()))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 1, "the first reply")
        assert app.session is not None
        path = app.session.path
        last = json.loads(path.read_text().splitlines()[-1])["id"]
        if change == "append":  # pi appends without a lock
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.write(fd, foreign_label(last))
            os.close(fd)
        else:  # another program cut the last line off
            data = path.read_bytes()
            path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])
        before = path.read_bytes()
        notices: list[str] = []
        original = app.notify

        def record(message: str, *args: object, **kwargs: object) -> None:
            notices.append(str(message))
            original(message, *args, **kwargs)  # type: ignore[arg-type]

        app.notify = record  # type: ignore[method-assign]
        await type_text(pilot, "second")
        await pilot.press("enter")
        await type_text(pilot, " more")  # typed on while the send fails: kept after it
        await wait_for(pilot, lambda: any("changed on disk" in n for n in notices), "the notice")
        await wait_for(pilot, lambda: not app.busy, "the send to end")
        assert app.is_running
        assert path.read_bytes() == before, "the file was written or rewritten"
        assert len(server.requests) == 1, "a model call on a file that changed under us"
        matching = [n for n in notices if "changed on disk" in n]
        assert all("\n" not in n and str(path) in n for n in matching), matching
        assert app.composer.text.split() == ["second", "more"], repr(app.composer.text)
        assert any("back in the composer" in n for n in notices), notices
