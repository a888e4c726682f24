"""agent_tui's own modules, each parsed once per test process for the tests that read the code
(a parse of the package takes about 0.7 s of CPU: two tests did it each)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "agent_tui"


@functools.cache
def package_trees() -> tuple[tuple[Path, ast.Module], ...]:
    """Every ``agent_tui/**/*.py`` and its syntax tree (shared: read them, never change them)."""
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
    )
