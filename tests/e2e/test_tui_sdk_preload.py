"""The provider's SDK is imported in a thread once the app has painted, never on the event loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a fresh Python process that starts the app


def test_the_provider_sdk_is_imported_after_the_first_frame_without_freezing_the_app(tmp_path: Path) -> None:
    """Importing anthropic takes up to 0.9 s; done at the first send, it froze the keyboard. The app
    imports it in a thread once painted. A fresh process, so that nothing imported it before."""
    script = f"""
import asyncio, os, sys, threading
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test"
importers = []

class Watch:  # notes which thread first looks for the SDK, then lets the real finders find it
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "anthropic":
            importers.append(threading.current_thread() is threading.main_thread())
        return None

sys.meta_path.insert(0, Watch)
from tests.support.tui_fixtures import SIZE, make_app
from pathlib import Path

async def main():
    app = make_app(Path({str(tmp_path)!r}))
    async with app.run_test(size=SIZE) as pilot:
        while getattr(sys.modules.get("anthropic"), "AsyncAnthropic", None) is None:
            await asyncio.sleep(0.005)  # the event loop keeps running meanwhile (the test's timeout)
        assert importers == [False], f"imported on the main thread: {{importers}}"
        print("imported in a thread")

asyncio.run(main())
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env["AGENT_TUI_CONFIG"] = str(tmp_path / "config.toml")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "imported in a thread"
