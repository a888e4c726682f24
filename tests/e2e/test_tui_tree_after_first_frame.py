"""Opening where the tree is hidden (80 columns) paints the conversation first and builds the tree
right after (a 150,000-entry file's tree costs 0.3-0.5 s); where it shows beside the chat, it is
in the first frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pilot import wait_for
from tests.support.tui_fixtures import linear_session, make_app

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize(("size", "in_first_frame"), [((80, 24), False), ((200, 50), True)])
async def test_the_tree_is_built_after_the_first_frame_only_when_hidden(
    tmp_path: Path, size: tuple[int, int], in_first_frame: bool
) -> None:
    path = linear_session(tmp_path / "sessions" / "s.jsonl", 300, forks_every=50)
    app = make_app(tmp_path, path)
    built_at_paint: list[bool] = []
    painted = app._painted

    def recording() -> None:
        built_at_paint.append(app.session_tree.state is not None)
        painted()

    app._painted = recording  # type: ignore[method-assign]
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.first_paint_at is not None, "the first frame")
        assert built_at_paint == [in_first_frame]
        state = app.session_tree.state
        assert state is not None, "the tree was never built"
        assert state.leaf_id == app.index.leaf_id
        assert app.session_tree.cursor_node is not None  # on the leaf's row, as before
        assert app.session_tree.cursor_node.data.entry_id == app.index.leaf_id  # type: ignore[union-attr]
