"""Claude Code transcripts of any size, for import tests (the importer only reads them)."""

from __future__ import annotations

import json
from pathlib import Path


def claude_transcript(path: Path, turns: int, text_bytes: int = 200) -> Path:
    """A Claude Code transcript of ``turns`` user prompts, each answered once, chained by uuid."""
    lines = []
    parent: str | None = None
    filler = "lorem ipsum dolor sit amet " * (text_bytes // 27 + 1)
    for turn in range(turns):
        for role in ("user", "assistant"):
            uuid = f"{turn:08x}-0000-4000-8000-{0 if role == 'user' else 1:012x}"
            stamp = f"2025-08-14T09:{turn // 60 % 60:02d}:{turn % 60:02d}.000Z"
            message: dict[str, object]
            if role == "user":
                message = {"role": "user", "content": f"prompt {turn}: {filler[:text_bytes]}"}
            else:
                message = {
                    "id": f"msg_{turn}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": f"answer {turn}: {filler[:text_bytes]}"}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
            lines.append(
                json.dumps(
                    {
                        "parentUuid": parent,
                        "isSidechain": False,
                        "cwd": "/home/dev/calc",
                        "sessionId": "8d2f4b6a-0c1e-4a3b-9d5f-7b9c1e3a5f60",
                        "type": role,
                        "message": message,
                        "uuid": uuid,
                        "timestamp": stamp,
                    }
                )
            )
            parent = uuid
    path.write_text("\n".join(lines) + "\n")
    return path
