"""The HTML export, opened in headless Chromium: it shows what it should and runs nothing it should not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_tui.library.export import export_html
from agent_tui.library.html_export import json_for_script
from agent_tui.library.marks import branch_marks
from agent_tui.projection.context import project
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.chromium import Dom, dump_dom, dump_many, parse
from tests.support.session_builder import Builder, assistant, header, tool_result, user

pytestmark = pytest.mark.slow  # a Chromium per page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "sessions.example").glob("*.jsonl"))


def load(path: Path) -> SessionIndex:
    return SessionIndex(read_file(path), str(path))


def words(text: str, n: int = 6) -> list[str]:
    return re.findall(r"[A-Za-z0-9]{3,}", text)[:n]


def message_text(message: dict[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text")))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def example_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[SessionIndex, Dom]]:
    assert EXAMPLES, "sessions.example/ holds no sessions"
    folder = tmp_path_factory.mktemp("html")
    jobs = []
    indexes = {}
    for path in EXAMPLES:
        index = load(path)
        page = folder / f"{path.stem}.html"
        page.write_text(export_html(index, source_name=path.name), encoding="utf-8")
        jobs.append((page, ""))
        indexes[path.name] = index
    doms = dump_many(jobs)
    return {name: (indexes[name], parse(dom)) for name, dom in zip(indexes, doms, strict=True)}


@pytest.mark.parametrize("name", [p.name for p in EXAMPLES])
def test_every_example_shows_its_active_branch(
    name: str, example_pages: dict[str, tuple[SessionIndex, Dom]]
) -> None:
    index, dom = example_pages[name]
    assert dom.body_attrs.get("data-ready"), f"{name}: the viewer script did not run"
    chat = dom.region("chat")
    path = index.active_path()
    checked = 0
    for entry in path:
        message = entry.message
        if message is None or message.get("role") not in ("user", "assistant", "toolResult"):
            continue
        expected = words(message_text(message))
        missing = [w for w in expected if w not in chat]
        assert not missing, f"{name}: entry {entry.id} ({message.get('role')}): {missing} not shown"
        checked += 1
    assert checked >= 3
    # one article per entry of the branch, the leaf included; nothing of other branches
    articles = [a for a in dom.with_class("article", "entry") if (a.get("id") or "").startswith("n")]
    assert len(articles) == len(path)
    assert index.leaf_id is not None and index.leaf_id in dom.region("chat-head")
    # the tree lists every entry's kind; labels show in it
    for label in index.labels.values():
        assert label in dom.region("tree") + dom.region("chat")
    if index.name:
        assert dom.title == index.name
    # marks of the active branch are on the right articles
    marks = branch_marks(project(index))
    marked = {a["id"] for a in articles if re.search(r"\bm-[A-Z]\b", a.get("class", ""))}
    node_ids = json.loads(_data_json(index, name))
    expected_marked = {f"n{node_ids.index(eid)}" for eid in marks if eid in node_ids}
    assert marked == expected_marked


def _data_json(index: SessionIndex, name: str) -> str:
    order = [e.id for root in index.roots() for e in index.walk(root)]
    return json.dumps(order)


def test_marks_on_the_examples(example_pages: dict[str, tuple[SessionIndex, Dom]]) -> None:
    _, edits = example_pages["edits.jsonl"]
    badges = {a.get("class") for a in edits.with_class("span", "badge")}
    assert {"badge m-H", "badge m-R"} <= badges  # hidden and replaced entries are marked
    _, compaction = example_pages["compaction.jsonl"]
    assert "summarized" in " ".join(compaction.text.get("chat", []))
    assert compaction.with_class("article", "m-C") and compaction.with_class("article", "m-M")


def test_branches_click_through(tmp_path: Path) -> None:
    source = ROOT / "sessions.example" / "branches.jsonl"
    index = load(source)
    page = tmp_path / "branches.html"
    page.write_text(export_html(index), encoding="utf-8")
    other_leaf = next(e.id for e in index.entries if not index.children.get(e.id) and e.id != index.leaf_id)
    other_path = {e.id for e in index.path_to(other_leaf)}
    only_active = next(e for e in index.active_path() if e.id not in other_path and e.type == "message")
    only_other = next(e for e in index.path_to(other_leaf) if e.id not in {x.id for x in index.active_path()})
    active, other = (parse(d) for d in dump_many([(page, ""), (page, f"#entry={other_leaf}")]))
    assert "Active branch" in active.region("chat-head")
    assert words(message_text(only_active.message or {}))[0] in active.region("chat")
    # following a link to an entry of another branch shows that branch
    head = other.region("chat-head")
    assert "Other branch" in head and other_leaf in head and "back to the active branch" in head
    chat = other.region("chat")
    assert all(w in chat for w in words(message_text(only_other.message or {})))
    assert 'id="n' in dump_dom_text(other) and only_active.id not in chat
    # the fork point offers both branches
    forks = other.with_class("button", "fork")
    assert len(forks) == 2 and len(other.with_class("button", "current")) == 1


def dump_dom_text(dom: Dom) -> str:
    return " ".join(f'id="{a.get("id")}"' for _, a in dom.elements if a.get("id"))


# -- escaping: a transcript never runs script ------------------------------------------------------

PROBES = [
    "<script>document.title='PWNED-1'</script>",
    "<img src=x onerror=\"document.title='PWNED-2'\">",
    "</script><script>document.title='PWNED-3'</script>",
    "</template><img src=x onerror=\"document.title='PWNED-4'\">",
    "<svg onload=\"document.title='PWNED-5'\"></svg>",
    "<a href=\"javascript:document.title='PWNED-6'\">x</a>",
]


def probe_session(path: Path) -> Path:
    b = Builder(lines=[header()])
    probe = "\n".join(PROBES)
    b.message(user(f"user text {probe} \u2028 line separator \u2029"))
    md = (
        "Markdown with a code block:\n\n```html\n</script><script>document.title='PWNED-7'</script>\n```\n\n"
        "[click me](javascript:document.title='PWNED-8') and <javascript:alert(1)> and "
        "<img src=x onerror=\"document.title='PWNED-9'\"> and [data](data:text/html;base64,PHNjcmlwdD4=)"
        "\n\n![tracker](https://example.invalid/pixel.png)"
    )
    b.message(assistant(md, [("c1", "bash</script><b onmouseover=alert(1)>", {"command": probe})]))
    b.message(tool_result("c1", probe, name="<img src=x onerror=alert(2)>"))
    b.add("label", targetId="e0001", label="</script><img src=x onerror=\"document.title='PWNED-10'\">")
    b.add("session_info", name="<svg onload=\"document.title='PWNED-11'\"> name")
    b.add("custom_message", customType="<script>x</script>", content=probe, display=True)
    b.add(
        "compaction",
        summary=f"summary {probe}",
        firstKeptEntryId="e0003",
        tokensBefore=10,
    )
    b.lines.append(
        {
            "type": "message",
            "id": '"><img src=x onerror="document.title=\'PWNED-12\'">',
            "parentId": b.leaf,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "an odd id"},
                    {"type": "image", "mimeType": 'image/png" onerror="alert(3)', "data": "AAAA"},
                ],
                "timestamp": 5,
            },
        }
    )
    return b.write(path)


def assert_inert(dom: Dom, title: str) -> None:
    assert dom.title == title, f"a probe ran: the title is now {dom.title!r}"  # every probe sets the title
    assert dom.body_attrs.get("data-ready"), "the viewer did not run, so the test proves nothing"
    scripts = [a for t, a in dom.elements if t == "script"]
    assert len(scripts) == 2 and scripts[0].get("type") == "application/json"
    for tag, attrs in dom.elements:
        handlers = [k for k in attrs if k.startswith("on")]
        assert not handlers, f"<{tag}> carries {handlers}"
        for key in ("href", "src", "action", "formaction"):
            value = attrs.get(key, "").strip().lower()
            assert not value.startswith(("javascript:", "data:text", "vbscript:")), f"<{tag} {key}={value}>"
            if key == "src" and value:
                assert value.startswith("data:image/"), f"<{tag}> loads {value}"
        assert tag not in ("iframe", "object", "embed", "svg", "base", "form")


def test_xss_probe_stays_inert(tmp_path: Path) -> None:
    session = probe_session(tmp_path / "probe.jsonl")
    index = load(session)
    page = tmp_path / "probe.html"
    page.write_text(export_html(index), encoding="utf-8")
    html = page.read_text()
    # the JSON data cannot close its script element
    data = html.split('<script type="application/json" id="session-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and "\u2028" not in data
    last = index.active_path()[-1].id
    plain, focused = (parse(d) for d in dump_many([(page, ""), (page, "#entry=" + last)]))
    for dom in (plain, focused):
        assert_inert(dom, index.name or "")
    chat = plain.region("chat")
    # the probes show as text
    assert "<script>document.title='PWNED-1'</script>" in chat
    assert "</script><script>document.title='PWNED-7'</script>" in chat
    assert "click me" in chat and plain.region("top").count("PWNED-11") == 1
    assert "</script><img" in plain.region("tree")  # the label, as text
    # markdown images become plain links: nothing is fetched from the network
    assert not [a for t, a in plain.elements if t == "img" and "example.invalid" in a.get("src", "")]
    assert any("example.invalid" in a.get("href", "") for t, a in plain.elements if t == "a")
    # the tool result and the odd id are there, as text
    assert "an odd id" in focused.region("chat")


def test_the_probe_would_run_if_it_were_not_escaped(tmp_path: Path) -> None:
    """Control: the same probes pasted raw into a page do run, so the test above can fail."""
    page = tmp_path / "raw.html"
    page.write_text(f"<html><head><title>t</title></head><body>{PROBES[1]}</body></html>")
    assert "PWNED-2" in parse(dump_dom(page, budget_ms=2000)).title


def test_content_security_policy_blocks_foreign_script(tmp_path: Path) -> None:
    """Defense in depth: even a script that got into the page would not run, while the viewer does."""
    index = load(ROOT / "sessions.example" / "branches.jsonl")
    html = export_html(index).replace("</body>", "<script>document.title='PWNED-CSP'</script></body>")
    page = tmp_path / "csp.html"
    page.write_text(html, encoding="utf-8")
    dom = parse(dump_dom(page, budget_ms=2000))
    assert "PWNED" not in dom.title and dom.body_attrs.get("data-ready")
    assert 'http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;;' in html


def test_json_for_script_escapes() -> None:
    text = json_for_script({"a": "</script><!-- & \u2028\u2029 >"})
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == {"a": "</script><!-- & \u2028\u2029 >"}


# -- 20,000 entries --------------------------------------------------------------------------------


def big_session(path: Path, n: int = 20_000) -> tuple[Path, str, str]:
    b = Builder(lines=[header()])
    fork_point = ""
    first_user = ""
    while b.counter < n - 4:
        i = b.counter
        first = b.message(user(f"step {i}: please run the tests for module_{i}"))
        first_user = first_user or first
        b.message(
            assistant(
                f"Running **tests** for `module_{i}`.", [(f"c{i}", "bash", {"command": f"pytest -q t{i}"})]
            )
        )
        b.message(tool_result(f"c{i}", f"{i % 7} passed in 0.0{i % 9}s\n" * 3, name="bash"))
        b.message(assistant(f"All green for module_{i}.\n\n```python\nassert run({i}) == {i}\n```"))
        if i == 6000:
            fork_point = b.leaf or ""
        if i == 10000:
            b.add(
                "compaction", summary="## Goal\nrun every module", firstKeptEntryId=first, tokensBefore=99000
            )
    side = b.message(user("a side branch"), parent=fork_point)
    b.message(assistant("side answer"), parent=side)
    b.message(user("the last question"), parent=b.lines[-3]["id"])
    last = b.message(assistant("the last answer"))
    return b.write(path), first_user, last


def test_export_of_20000_entries(tmp_path: Path) -> None:
    source, _, last = big_session(tmp_path / "big.jsonl")
    index = load(source)
    assert len(index) >= 20_000
    html = export_html(index)  # ~8 s on an idle 2-core machine; speed is not asserted in tests
    page = tmp_path / "big.html"
    page.write_text(html, encoding="utf-8")
    size_mb = page.stat().st_size / 1e6
    assert size_mb < 60
    top, bottom = (parse(d) for d in dump_many([(page, ""), (page, f"#entry={last}")], budget_ms=8000))
    for dom in (top, bottom):
        assert dom.body_attrs.get("data-ready")
        articles = dom.with_class("article", "entry")
        assert 0 < len(articles) <= 300, "the page renders a window of the branch, not all of it"
        assert len(dom.with_class("div", "row")) <= 200, "the tree renders only the visible rows"
    assert "step 0: please run the tests for module_0" in top.region("chat")
    assert "the last answer" in bottom.region("chat") and "Active branch" in bottom.region("chat-head")
    assert "summarized" in top.region("chat")  # the compaction's cut marks the early entries
    assert len(bottom.with_class("button", "more")) == 1  # earlier entries load on demand
