"""Toad (``batrachian-toad``), the Textual front end for ACP agents, for the test that runs agent-tui
under it. Toad needs Python >= 3.14: ``scripts/toad-env`` (which ``make setup`` runs) builds one
beside the checkout, in ``.toad``; this builds it when it is missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOAD_DIR = ROOT / ".toad"


def toad() -> Path:
    """The ``toad`` command (``.toad/bin/toad``), built first if needed (about 40 s, once)."""
    subprocess.run([str(ROOT / "scripts" / "toad-env"), str(TOAD_DIR)], check=True, timeout=900)
    return TOAD_DIR / "bin" / "toad"
