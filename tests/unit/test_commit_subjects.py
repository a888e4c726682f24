"""scripts/commit-subjects: a subject over 72 characters is named, one of 72 is not (make lint runs
the script on the commits after its BASE)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "commit-subjects"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("commit_subjects", str(SCRIPT))
    spec = importlib.util.spec_from_loader("commit_subjects", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_a_subject_over_72_characters_is_named_and_one_of_72_is_not() -> None:
    script = _script()
    fits = "tests: " + "x" * 65
    over = "tests: " + "y" * 66
    assert (len(fits), len(over)) == (72, 73)
    found = script.long_subjects(f"abc1234 {fits}\ndef5678 {over}\n")
    assert found == [f"def5678: 73 characters: {over}"]
    assert script.long_subjects("") == []
