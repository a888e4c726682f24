"""Small real images for attachment and read tests."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def png(path: Path, size: tuple[int, int] = (40, 30)) -> Path:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    return path
