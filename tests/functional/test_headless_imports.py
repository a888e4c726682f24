"""No face without the app imports Textual or Rich: print mode (``-p``), ``--mode json``,
``--mode rpc`` and ``agent-tui acp``, each run as a subprocess through a whole turn against the
fake model server. ``AGENT_TUI_DEBUG_MODULES=FILE`` makes the command list every module it
imported when it ends (a superset of what the path to the first request imported)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from acp import text_block

from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.print_env import Env
from tests.support.rpc_client import RpcClient

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

#: What a face without a screen must never import.
APP_ONLY = ("textual", "rich", "agent_tui.tui")
#: Nor aiohttp: only the SDKs' optional transport would import it, which the adapters never use
#: (0.25 s of its modules, and an SSL context built at import; see ``agent_tui/providers``).
UNUSED = ("aiohttp",)


def imported(listing: Path) -> set[str]:
    return set(listing.read_text().split())


def app_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in (*APP_ONLY, *UNUSED) or m.startswith(APP_ONLY))


@pytest.mark.parametrize("mode", [(), ("--mode", "json")], ids=["print", "json"])
def test_print_and_json_mode_import_no_textual(
    tmp_path: Path, server: FakeModelServer, mode: tuple[str, ...]
) -> None:
    env = Env(tmp_path, server)
    listing = tmp_path / "modules.txt"
    server.push(anthropic_stream(text("Hello.")))
    done = env.run(*mode, "-p", "hi", env={**env.env, "AGENT_TUI_DEBUG_MODULES": str(listing)})
    assert done.returncode == 0, done.stderr
    assert "Hello." in done.stdout
    modules = imported(listing)
    assert "anthropic" in modules and "agent_tui.cli.print_mode" in modules  # the listing is real
    assert app_modules(modules) == []


def test_rpc_mode_imports_no_textual(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    listing = tmp_path / "modules.txt"
    server.push(anthropic_stream(text("Hello.")))
    rpc = RpcClient([], env.work, {**env.env, "AGENT_TUI_DEBUG_MODULES": str(listing)})
    try:
        assert rpc.call({"type": "prompt", "message": "hi"})["success"] is True
        rpc.wait_for(lambda r: r.get("type") == "agent_end")
        code, stderr = rpc.finish()
    finally:
        rpc.kill()
    assert code == 0, stderr
    modules = imported(listing)
    assert "anthropic" in modules and "agent_tui.cli.rpc_mode" in modules
    assert app_modules(modules) == []


async def test_the_acp_agent_imports_no_textual(tmp_path: Path, server: FakeModelServer) -> None:
    env = AcpEnv(tmp_path, server)
    listing = tmp_path / "modules.txt"
    env.env["AGENT_TUI_DEBUG_MODULES"] = str(listing)
    server.push(anthropic_stream(text("Hello.")))
    client = EditorClient()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert response.stop_reason == "end_turn"
    assert client.message_text() == "Hello."
    modules = imported(listing)
    assert "anthropic" in modules and "agent_tui.acp.server" in modules
    assert app_modules(modules) == []


def test_the_sdk_is_imported_in_a_thread_and_the_adapter_waits_for_it() -> None:
    code = (
        "import sys\n"
        "from agent_tui.providers import base\n"
        "base.preload_sdk_in_background('openai')\n"
        "started = 'openai' in base._preloads\n"
        "cls = base.adapter_class('openai')\n"
        "done = not base._preloads['openai'].is_alive()\n"
        "print(started, done, 'openai' in sys.modules, 'aiohttp' in sys.modules, cls.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "True", "True", "False", "OpenAIProvider"], out.stderr
