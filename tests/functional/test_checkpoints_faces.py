"""File checkpoints through the faces: RPC's ``list_checkpoints`` and ``restore_checkpoint``, with
a turn's write and the user's ``!cmd`` (RPC ``bash``) each snapshotted, in the real process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.print_env import Env
from tests.support.rpc_client import RpcClient

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_rpc_lists_and_restores_checkpoints(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    session_file = tmp_path / "rpc.jsonl"
    server.push(
        anthropic_stream(text("Writing."), tool_use("t1", "write", {"path": "a.txt", "content": "v1\n"})),
        anthropic_stream(text("Done.")),
    )
    rpc = RpcClient(["--session", str(session_file)], env.work, env.env)
    try:
        rpc.send({"id": "p", "type": "prompt", "message": "write a.txt"})
        rpc.wait_for(lambda r: r["type"] == "agent_settled")
        assert (env.work / "a.txt").read_text() == "v1\n"
        answer = rpc.call({"id": "b", "type": "bash", "command": "printf 'v2\\n' > a.txt; echo b > b.txt"})
        assert answer["success"], answer
        listed = rpc.call({"id": "l", "type": "list_checkpoints"})["data"]["checkpoints"]
        # the turn: before and after; the !cmd: after (its "before" is the turn's end state)
        assert [c["when"] for c in listed] == ["before", "after", "after"]
        assert listed[-1]["files"] == {"added": ["b.txt"], "changed": ["a.txt"], "deleted": []}
        done = next(
            e["id"]
            for e in _entries(session_file)
            if e["type"] == "message"
            and e["message"]["role"] == "assistant"
            and e["message"]["content"][0].get("text") == "Done."
        )
        dry = rpc.call({"id": "d", "type": "restore_checkpoint", "entryId": done, "dryRun": True})["data"]
        assert dry["files"] == [{"path": "b.txt", "action": "delete"}, {"path": "a.txt", "action": "write"}]
        assert (env.work / "b.txt").exists()
        bad = rpc.call({"id": "x", "type": "restore_checkpoint", "entryId": "nope"})
        assert not bad["success"] and "nope" in bad["error"]
        res = rpc.call({"id": "r", "type": "restore_checkpoint", "entryId": done})
        assert res["success"], res
        assert (env.work / "a.txt").read_text() == "v1\n" and not (env.work / "b.txt").exists()
        undo = rpc.call({"id": "u", "type": "restore_checkpoint", "entryId": res["data"]["undoEntryId"]})
        assert undo["success"], undo
        assert (env.work / "a.txt").read_text() == "v2\n" and (env.work / "b.txt").read_text() == "b\n"
    finally:
        rpc.kill()
    kinds = [e["customType"] for e in _entries(session_file) if e["type"] == "custom"]
    assert kinds.count("agent-tui.restore") == 2
    store = env.home / "checkpoints"
    assert store.is_dir() and (store.stat().st_mode & 0o777) == 0o700
