"""A project, a home and a config for running `agent-tui` as a subprocess against the fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.fake_model_server import FakeModelServer

KEY = "sk-ant-api03-" + "A" * 40  # looks like a real key: it must not reach any file


class Env:
    def __init__(self, tmp: Path, server: FakeModelServer | str) -> None:
        """``server``: the fake server in this process, or a base URL (one running as a process)."""
        self.tmp = tmp
        self.work = tmp / "project"
        self.work.mkdir()
        self.home = tmp / "home"  # agent-tui's data dir (AGENT_TUI_HOME)
        self.user_home = tmp / "user"  # HOME: the user's own ~/.claude, ~/.pi, ~/.agents are not read
        self.user_home.mkdir()
        self.log = tmp / "requests.jsonl"
        config = tmp / "config.toml"
        config.write_text("[retry]\nbase_delay = 0.01\n")
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "PI_CODING_AGENT_DIR"))
        }
        self.env.update(
            HOME=str(self.user_home),
            AGENT_TUI_HOME=str(self.home),
            AGENT_TUI_CONFIG=str(config),
            AGENT_TUI_LOG_REQUESTS=str(self.log),
            ANTHROPIC_API_KEY=KEY,
            ANTHROPIC_BASE_URL=server if isinstance(server, str) else server.anthropic_base_url,
        )

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", *args],
            cwd=self.work,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=50,
        )

    def sessions(self) -> list[Path]:
        return sorted(self.home.glob("sessions/*/*.jsonl"))

    def entries(self, path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text().splitlines()[1:]]

    def user_texts(self) -> list[str]:
        """The text of each user message the (one) session stores."""
        (path,) = self.sessions()
        out = []
        for e in self.entries(path):
            if e["type"] == "message" and e["message"]["role"] == "user":
                content = e["message"]["content"]
                out.append(
                    content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                )
        return out
