"""scripts/import-cycles: each set of modules that import one another round, and nothing else
(make lint runs the script on agent_tui's import graph)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import-cycles"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("import_cycles", str(SCRIPT))
    spec = importlib.util.spec_from_loader("import_cycles", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_a_cycle_at_any_depth_is_found_and_a_one_way_chain_is_not() -> None:
    cycles = _script().cycles
    one_way = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}
    assert cycles(one_way) == []
    # tui.app -> commands -> help -> app (a TYPE_CHECKING import closes it), and a second one
    imports = {
        "app": {"commands"},
        "commands": {"help", "x"},
        "help": {"app"},
        "x": {"y"},
        "y": {"x"},
        "z": {"z"},
        "outside": {"textual"},  # a module not in the graph is not followed
    }
    assert cycles(imports) == [["app", "commands", "help"], ["x", "y"], ["z"]]


def test_a_long_chain_needs_no_recursion() -> None:
    chain = {f"m{i}": {f"m{i + 1}"} for i in range(5000)}
    assert _script().cycles(chain) == []
    chain["m5000"] = {"m0"}
    assert [len(c) for c in _script().cycles(chain)] == [5001]
