"""Headless Chromium for the HTML export tests: load a page, let its script run, dump the DOM.

No skips: without Chromium the tests fail and say how to install it
(``apt-get install -y chromium chromium-driver``, as ``.ci/run`` does).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--window-size=1280,900",
)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        "Chromium is needed for the HTML export tests and was not found: "
        "apt-get install -y chromium chromium-driver (as .ci/run does)",
        pytrace=False,
    )


def dump_dom(page: Path, fragment: str = "", budget_ms: int = 4000) -> str:
    """The DOM of ``page`` (a local file) after its scripts ran, as Chromium serializes it."""
    browser = chromium()
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        proc = subprocess.run(
            [
                browser,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--virtual-time-budget={budget_ms}",
                "--dump-dom",
                page.resolve().as_uri() + fragment,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if proc.returncode != 0 or "<html" not in proc.stdout:
        pytest.fail(
            f"chromium failed on {page} (exit {proc.returncode}): {proc.stderr[-2000:]}", pytrace=False
        )
    return proc.stdout


def dump_many(jobs: Sequence[tuple[Path, str]], budget_ms: int = 4000) -> list[str]:
    """Several pages at once (each Chromium takes about a second, mostly waiting)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda job: dump_dom(job[0], job[1], budget_ms), jobs))


@dataclass
class Dom:
    """What the tests look at in a dumped page: text by region, every element's attributes."""

    text: dict[str, list[str]] = field(default_factory=dict)  # region id -> text pieces
    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    title: str = ""
    body_attrs: dict[str, str] = field(default_factory=dict)

    def region(self, name: str) -> str:
        return " ".join("".join(self.text.get(name, [])).split())

    def count(self, tag: str, **attrs: str) -> int:
        return sum(1 for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items()))

    def with_class(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and cls in (a.get("class") or "").split()]


REGIONS = ("chat", "chat-head", "tree", "branch-list", "store", "top")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.dom = Dom()
        self.stack: list[tuple[str, str | None]] = []
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.dom.elements.append((tag, values))
        if tag == "body":
            self.dom.body_attrs = values
        if tag == "title":
            self.in_title = True
        if tag not in VOID:
            self.stack.append((tag, values.get("id")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.dom.title += data
        region = next((rid for _, rid in reversed(self.stack) if rid in REGIONS), None)
        if region is not None:
            self.dom.text.setdefault(region, []).append(data)


def parse(html: str) -> Dom:
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.dom
