"""The RPC command table (agent_tui.cli.rpc_commands): built from the command modules' own tables,
one handler per name, and the same commands docs/RPC.md documents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_tui.cli.rpc_commands import GROUPS, HANDLERS, join
from agent_tui.cli.rpc_registry import Handler
from agent_tui.store.record import JSONObject

pytestmark = pytest.mark.unit

RPC_DOC = Path(__file__).parents[2] / "docs" / "RPC.md"


def _documented() -> set[str]:
    """The command names in the first column of docs/RPC.md's Commands table."""
    text = RPC_DOC.read_text(encoding="utf-8")
    table = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in table.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and "`" in cells[1]:
            names.update(re.findall(r"`([a-z_]+)`", cells[1]))
    return names


def test_every_command_is_in_exactly_one_group_and_the_table() -> None:
    seen = [name for group in GROUPS for name in group]
    assert len(seen) == len(set(seen))
    assert set(seen) == set(HANDLERS)
    for group in GROUPS:
        for name, handler in group.items():
            assert HANDLERS[name] is handler


def test_the_table_is_what_docs_rpc_md_documents() -> None:
    documented = _documented()
    assert "set_permission_mode" in documented and "restore_checkpoint" in documented
    assert set(HANDLERS) == documented


def test_a_name_two_groups_define_is_refused() -> None:
    async def one(server: object, cmd: JSONObject) -> JSONObject | None:
        return None

    handler: Handler = one
    with pytest.raises(ValueError, match="'prompt' is defined twice"):
        join(({"prompt": handler}, {"get_state": handler, "prompt": handler}))
