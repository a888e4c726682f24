"""How far the token estimator (characters / 3.5) is from a real tokenizer.

No provider is reachable here, so the reference is OpenAI's o200k_base and
cl100k_base BPE (bundled offline by the ``quicktok-v1`` package, installed on
demand). Claude's tokenizer is not public; its counts for code run close to
cl100k's. The transcripts are built from real text on this machine: Python
source files as ``read`` results, ``ls``/``git log`` output as ``bash``
results, the project's docs as prose, tool-call arguments as JSON, plus the
files in sessions.example/.
"""

from __future__ import annotations

import glob
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_tui.projection.context import project  # noqa: E402
from agent_tui.projection.tokens import estimate_message  # noqa: E402
from agent_tui.store.index import SessionIndex  # noqa: E402
from agent_tui.store.reader import read_file  # noqa: E402


def _encodings() -> dict[str, Any]:
    try:
        import quicktok
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "quicktok-v1"], check=True)
        import quicktok
    return {name: quicktok.get_encoding(name) for name in ("o200k_base", "cl100k_base")}


def _message_text(message: dict[str, Any]) -> str:
    """What the provider tokenizes for a message: text, thinking, tool name + JSON arguments."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "thinking":
            parts.append(block.get("thinking", ""))
        elif kind == "toolCall":
            parts.append(block.get("name", "") + json.dumps(block.get("arguments")))
    return "\n".join(parts)


def realistic_messages(seed: int = 7, count: int = 300) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    sources = sorted(glob.glob(f"{sys.base_prefix}/lib/python3.*/*.py"))[:400] or sorted(
        glob.glob(str(ROOT / "agent_tui/**/*.py"), recursive=True)
    )
    docs = [
        p
        for p in [
            ROOT / "README.md",
            ROOT / "docs/FORMAT.md",
            ROOT / "docs/ARCHITECTURE.md",
        ]
        if p.exists()
    ]
    prose = "\n\n".join(p.read_text() for p in docs).split("\n\n")
    listing = subprocess.run(["ls", "-la", "/usr/lib", "/etc"], capture_output=True, text=True).stdout
    log = subprocess.run(
        ["git", "log", "--stat", "-n", "40"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    out: list[tuple[str, dict[str, Any]]] = []
    for _ in range(count):
        kind = rng.choice(["code", "code", "prose", "bash", "args"])
        if kind == "code":
            text = Path(rng.choice(sources)).read_text(errors="replace")
            start = rng.randrange(max(1, len(text) - 8000))
            message = {
                "role": "toolResult",
                "content": [{"type": "text", "text": text[start : start + rng.randint(500, 8000)]}],
            }
        elif kind == "prose":
            message = {"role": "user", "content": "\n\n".join(rng.sample(prose, k=min(3, len(prose))))}
        elif kind == "bash":
            text = rng.choice([listing, log])
            start = rng.randrange(max(1, len(text) - 4000))
            message = {
                "role": "toolResult",
                "content": [{"type": "text", "text": text[start : start + 4000]}],
            }
        else:
            path = rng.choice(sources)
            message = {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look at the file and fix the failing test."},
                    {
                        "type": "toolCall",
                        "id": "c",
                        "name": "edit",
                        "arguments": {
                            "path": path,
                            "edits": [{"oldText": "return x", "newText": "return x + 1"}],
                        },
                    },
                ],
            }
        out.append((kind, message))
    for path in sorted((ROOT / "sessions.example").glob("*.jsonl")):
        try:
            for m in project(SessionIndex(read_file(path))).messages:
                out.append(("examples", m.message))
        except Exception:
            continue
    return out


def run() -> list[tuple[str, str]]:
    encodings = _encodings()
    messages = realistic_messages()
    rows: list[tuple[str, str]] = []
    for name, enc in encodings.items():
        by_kind: dict[str, list[float]] = {}
        total_est = total_real = 0
        for kind, message in messages:
            real = len(enc.encode(_message_text(message)))
            est = estimate_message(message)
            if real < 20:
                continue
            by_kind.setdefault(kind, []).append((est - real) / real)
            total_est += est
            total_real += real
        for kind, errors in sorted(by_kind.items()):
            median = statistics.median(errors) * 100
            mae = statistics.median(abs(e) for e in errors) * 100
            rows.append(
                (
                    f"estimate vs {name}, {kind} ({len(errors)} msgs)",
                    f"median error {median:+.0f}%, median |error| {mae:.0f}%",
                )
            )
        rows.append(
            (
                f"estimate vs {name}, whole transcript",
                f"{total_est:,} estimated / {total_real:,} real = {total_est / total_real:.2f}x",
            )
        )
    return rows


if __name__ == "__main__":
    for label, figure in run():
        print(f"{label:<52} {figure}")
