"""Messages typed in one burst, each ended by Enter, are sent one by one, each as typed: the app
took the first while the composer already held the second, and the second Enter sent
``first messagesecond message`` (a 1,000-message burst made each carry all the earlier ones)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual import events

from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.pilot import wait_for
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def user_texts(sessions: Path) -> list[str]:
    """The text of every user message of the one session file under ``sessions``."""
    (path,) = sorted(sessions.rglob("*.jsonl"))
    out: list[str] = []
    for line in path.read_text().splitlines()[1:]:
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry.get("type") == "message" and message.get("role") == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return out


@pytest.mark.parametrize("count", [3, 25])
def test_a_burst_of_lines_in_tmux_stores_each_line_as_its_own_message(
    tmp_path: Path, server: FakeModelServer, count: int
) -> None:
    command, work, sessions = app_command(tmp_path, server)
    # the first reply is slow: the lines after the first are queued (steering) while it streams
    server.push(openai_stream("One " * 20 + "done.").slow(20))
    for _ in range(count + 2):
        server.push(openai_stream("Taken."))
    lines = ["first message", "second message", *(f"line {i} of the burst" for i in range(3, count + 1))]
    tmux = Tmux(f"agent-tui-bursts-{os.getpid()}-{count}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        keys: list[str] = []
        for line in lines:
            keys += [line, "Enter"]
        tmux.keys(*keys)  # one send-keys: one burst of bytes
        tmux.wait(lambda s: "Taken." in s and "streaming" not in s, "the replies", timeout=90)

        def stored() -> bool:
            try:
                return len(user_texts(sessions)) >= len(lines)
            except ValueError:
                return False

        deadline_screen = tmux.wait(lambda s: stored(), "every line stored", timeout=60)
        assert user_texts(sessions) == lines, deadline_screen
        assert "line" not in tmux.screen().splitlines()[-3], "the composer still holds text"
    finally:
        tmux.stop()


async def test_a_line_the_app_cannot_take_stays_typed_and_alone(tmp_path: Path) -> None:
    """``hello⏎world⏎`` in one burst to an agent that takes no message while it replies: ``hello``
    is sent, ``world`` is refused and stays in the composer, whole and alone (the second Enter
    sent ``helloworld``, refused, and then the first's clearing took it all)."""
    factory = ScriptedFactory(reply="Done.", hold=True)
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key, character in [*((c, c) for c in "hello"), ("enter", None), *((c, c) for c in "world")]:
            app.post_message(events.Key(key, character))
        app.post_message(events.Key("enter", None))
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "the send")
        for _ in range(5):
            await pilot.pause()
        assert factory.turns[0].prompts == ["hello"]
        assert app.composer.text == "world", repr(app.composer.text)
        factory.turns[0].release.set()
