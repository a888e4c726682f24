"""The panel and the cache report read a session's messages once each and keep none decoded
(issue 25: a 1 GB session's context held twice after the first frame put the app over 300 MB)."""

from __future__ import annotations

from pathlib import Path

from agent_tui.projection.call_history import latest_report
from agent_tui.projection.context import project
from agent_tui.projection.models import lookup
from agent_tui.projection.request import prepare
from agent_tui.projection.rows import TokenCache, blocks_text, build_panel_model
from agent_tui.projection.tokens import context_tokens
from agent_tui.store import sidecar
from agent_tui.store.index import SessionIndex
from tests.unit.test_sidecar_index import _mapped, _session


def _opened(path: Path) -> SessionIndex:
    """The session as the app opens it: through its sidecar, every entry read from the file."""
    loaded, _ = sidecar.load(path)
    assert _mapped(loaded)
    return SessionIndex(loaded, str(path))


def _path(tmp_path: Path) -> Path:
    path = _session(tmp_path / "s.jsonl", turns=8)
    sidecar.load(path)  # writes the sidecar
    return path


def test_the_panel_keeps_no_message_decoded_and_its_rows_still_open(tmp_path: Path) -> None:
    path = _path(tmp_path)
    projection = project(_opened(path))
    model = build_panel_model(projection, lookup("gpt-4o", "openai"), "openai/gpt-4o", TokenCache())
    results = [m for m in projection.messages if m.role == "toolResult"]
    assert len(results) == 8
    assert all(m._message is None and m._raw is None for m in results)  # neither decoded nor bytes
    assert all(m._entry is not None and m._entry._message_raw is None for m in results)
    # the figures are those of the messages decoded as before
    fresh = project(_opened(path))
    assert model.total == context_tokens(fresh).tokens
    sent = {pm.source_id: pm for pm in prepare(fresh.messages).messages}
    rows = [r for r in model.message_rows if r.source_id in sent]
    assert len(rows) == len(sent) == 24
    for row in rows:  # opening a row reads its message again: the text sent, whole
        assert row.full_text() == blocks_text(sent[row.source_id].content)
    assert model.prepared is not None and all(not pm.content for pm in model.prepared.messages)
    assert [pm.source_id for pm in model.prepared.messages] == list(sent)


def test_the_cache_report_keeps_digests_not_the_request(tmp_path: Path) -> None:
    path = _path(tmp_path)
    projection = project(_opened(path))
    report = latest_report(projection.path)
    assert report is not None and report.call.pieces
    assert all(len(p.key) == 16 for p in report.call.pieces)
    assert report.shared_prefix_tokens > 0  # the two calls' equal pieces still compare equal
    assert all(e._message_raw is None for e in projection.path if e.role == "toolResult")
