"""Writing the user's files for a test (templates, skills, prompt files, configs)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, content: str) -> Path:
    """``content`` at ``path``, its folders made as needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


__all__ = ["write"]
