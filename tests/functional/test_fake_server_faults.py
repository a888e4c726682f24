"""The issue's overflow scenario as a user runs it: the fake model server started as a process with
``--fault context_window:9000``, two turns of ~1,300 words through the real CLI (``-p``, then
``-c``). The server refuses turn 2; agent-tui compacts and retries, and the retried request ends
with turn 2's prompt, verbatim (it was folded into a "split turn" summary before)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, server_tokens
from tests.support.print_env import Env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "server.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.fake_model_server",
            "--fault",
            "context_window:9000",
            "--log",
            str(log),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url, log
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def _words(tag: str) -> str:
    return f"{tag}: " + " ".join(f"{tag}{i:04d}" for i in range(1_300))


def _last_user_block(body: dict[str, Any]) -> str:
    """The last message's last text block (the summary and the kept turn are one user message)."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    content = last["content"]
    return content if isinstance(content, str) else str(content[-1].get("text"))


def test_the_fault_option_refuses_an_overflowing_request_and_the_retry_asks_turn_2(
    server_process: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = server_process
    env = Env(tmp_path, url)
    first, second = _words("first"), _words("second")
    out = env.run("-p", first)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "reply to: " + first[:80]
    out = env.run("-p", second, "-c")
    assert out.returncode == 0, out.stderr
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    bodies = [r["body"] for r in requests if r["path"].startswith("/v1/messages")]
    sizes = [server_tokens(b) for b in bodies]
    # turn 1 fits; turn 2 is refused; a summary; the retry fits and ends with turn 2's prompt
    assert sizes[0] <= 9_000 < sizes[1], sizes
    assert len(bodies) == 4 and sizes[3] <= 9_000, sizes
    assert second not in json.dumps(bodies[2])  # the summary request does not fold the question
    retry = bodies[3]
    assert _last_user_block(retry) == second
    assert "split turn" not in json.dumps(retry)
    assert out.stdout.strip() == "reply to: " + second[:80]  # the reply answers turn 2


def test_a_bad_fault_is_one_line_naming_it(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tests.support.fake_model_server", "--fault", "context_windw:9000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "unknown fault 'context_windw:9000'" in out.stderr
    with pytest.raises(ValueError, match="known: context_window:N"):
        FakeModelServer().fault("context_window:lots")
