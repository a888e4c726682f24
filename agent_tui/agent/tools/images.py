"""Images for the model, as pi 1.6 prepares them (utils/mime, image-process, image-resize, exif-orientation).

``detect_image_mime`` sniffs the formats pi attaches (png but not animated png, jpeg but not JPEG-LS,
gif, webp, bmp); ``process_image`` converts what is not png/jpeg/gif/webp to png, and with auto-resize
(the default) fits the image in 2000x2000 pixels and 4.5 MB of base64, trying png and jpeg, lower jpeg
qualities, then smaller sizes, and says so in pi's words (the dimension note, the conversion hint, or
"[Image omitted: ...]").

Pillow is imported only here, and only when an image is processed, so nothing the CLI imports at
start-up pays for it. Bytes that cannot be decoded raise :class:`ImageDecodeError`, which the read tool
turns into a one-line error.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Literal

from agent_tui.agent.tools.truncate import format_size

if TYPE_CHECKING:
    from PIL import Image

# 4.5 MB of base64 payload: headroom below Anthropic's 5 MB limit (pi's DEFAULT_MAX_BYTES).
DEFAULT_IMAGE_MAX_BYTES = 4.5 * 1024 * 1024
IMAGE_TYPE_SNIFF_BYTES = 4100
#: An image file larger than this is not read to be decoded (a 300 MB file with a png header would
#: be read whole, then copied): a photo is a few MB, and what is attached is 4.5 MB at most anyway.
MAX_IMAGE_FILE_BYTES = 64 * 1024 * 1024

NOT_CONVERTED = "[Image omitted: could not be converted to a supported inline image format.]"
NOT_RESIZED = "[Image omitted: could not be resized below the inline image size limit.]"

_SUPPORTED = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}


@dataclass(frozen=True, slots=True)
class ResizeOptions:
    """pi's image resize options (the same for every model pi 1.6 knows)."""

    max_width: int = 2000
    max_height: int = 2000
    max_bytes: float = DEFAULT_IMAGE_MAX_BYTES  # of the base64 text
    jpeg_quality: int = 80


@dataclass(frozen=True, slots=True)
class ResizedImage:
    data: str  # base64
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool


@dataclass(frozen=True, slots=True)
class ProcessedImage:
    """An image ready to attach (``ok``: data, mime type, hints) or the message saying why it was omitted."""

    ok: bool
    data: str = ""
    mime_type: str = ""
    hints: list[str] = field(default_factory=list)
    message: str = ""


class ImageDecodeError(Exception):
    """The bytes could not be decoded as an image (corrupt, truncated, or not what the header says)."""


def image_file_too_large(size: int) -> str | None:
    """The note that an image file of ``size`` bytes is not read (None: it may be)."""
    if size <= MAX_IMAGE_FILE_BYTES:
        return None
    return (
        f"[Image omitted: the file is {format_size(size)}, over the "
        f"{format_size(MAX_IMAGE_FILE_BYTES)} limit for images.]"
    )


# -- format detection (pi's utils/mime.js) ------------------------------------------------------

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def detect_image_mime(head: bytes) -> str | None:
    """The image type of a file's first bytes (pi reads 4100), or None to read it as text."""
    if head.startswith(b"\xff\xd8\xff"):
        return None if len(head) > 3 and head[3] == 0xF7 else "image/jpeg"
    if head.startswith(_PNG_SIGNATURE):
        return "image/png" if _is_png(head) and not _is_animated_png(head) else None
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and _is_bmp(head):
        return "image/bmp"
    return None


def _u16le(b: bytes, at: int) -> int:
    return int.from_bytes(b[at : at + 2].ljust(2, b"\0"), "little")


def _u32le(b: bytes, at: int) -> int:
    return int.from_bytes(b[at : at + 4].ljust(4, b"\0"), "little")


def _u32be(b: bytes, at: int) -> int:
    return int.from_bytes(b[at : at + 4].ljust(4, b"\0"), "big")


def _is_png(b: bytes) -> bool:
    return len(b) >= 16 and _u32be(b, 8) == 13 and b[12:16] == b"IHDR"


def _is_animated_png(b: bytes) -> bool:
    offset = len(_PNG_SIGNATURE)
    while offset + 8 <= len(b):
        length = _u32be(b, offset)
        kind = b[offset + 4 : offset + 8]
        if kind == b"acTL":
            return True
        if kind == b"IDAT":
            return False
        following = offset + 8 + length + 4
        if following <= offset or following > len(b):
            return False
        offset = following
    return False


def _is_bmp(b: bytes) -> bool:
    if len(b) < 26:
        return False
    declared_size = _u32le(b, 2)
    pixel_offset = _u32le(b, 10)
    dib_size = _u32le(b, 14)
    if declared_size != 0 and declared_size < 26:
        return False
    if pixel_offset < 14 + dib_size:
        return False
    if declared_size != 0 and pixel_offset >= declared_size:
        return False
    if dib_size == 12:
        planes, bits = _u16le(b, 22), _u16le(b, 24)
    elif 40 <= dib_size <= 124:
        if len(b) < 30:
            return False
        planes, bits = _u16le(b, 26), _u16le(b, 28)
    else:
        return False
    return planes == 1 and bits in (1, 4, 8, 16, 24, 32)


# -- EXIF orientation (pi's utils/exif-orientation.js: jpeg and webp only) ----------------------


def exif_orientation(data: bytes) -> int:
    """The EXIF orientation (1-8) of a jpeg or webp file's bytes; 1 when there is none."""
    tiff = -1
    if data[:2] == b"\xff\xd8":
        tiff = _jpeg_tiff_offset(data)
    elif len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        tiff = _webp_tiff_offset(data)
    return 1 if tiff == -1 else _orientation_from_tiff(data, tiff)


def _has_exif_header(b: bytes, at: int) -> bool:
    return b[at : at + 6] == b"Exif\0\0"


def _jpeg_tiff_offset(b: bytes) -> int:
    offset = 2
    while offset < len(b) - 1:
        if b[offset] != 0xFF:
            return -1
        marker = b[offset + 1]
        if marker == 0xFF:
            offset += 1
            continue
        if marker == 0xE1:
            if offset + 4 >= len(b):
                return -1
            start = offset + 4
            if start + 6 > len(b):
                return -1
            if _has_exif_header(b, start):
                return start + 6
        if offset + 4 > len(b):
            return -1
        offset += 2 + ((b[offset + 2] << 8) | b[offset + 3])
    return -1


def _webp_tiff_offset(b: bytes) -> int:
    offset = 12
    while offset + 8 <= len(b):
        chunk = b[offset : offset + 4]
        size = _u32le(b, offset + 4)
        start = offset + 8
        if chunk == b"EXIF":
            if start + size > len(b):
                return -1
            return start + 6 if size >= 6 and _has_exif_header(b, start) else start
        offset = start + size + (size % 2)
    return -1


def _orientation_from_tiff(b: bytes, tiff: int) -> int:
    if tiff + 8 > len(b):
        return 1
    order: Literal["little", "big"] = "little" if b[tiff : tiff + 2] == b"II" else "big"

    def u16(at: int) -> int:
        return int.from_bytes(b[at : at + 2], order)

    ifd = tiff + int.from_bytes(b[tiff + 4 : tiff + 8], order)
    if ifd + 2 > len(b):
        return 1
    for i in range(u16(ifd)):
        entry = ifd + 2 + i * 12
        if entry + 12 > len(b):
            return 1
        if u16(entry) == 0x0112:
            value = u16(entry + 8)
            return value if 1 <= value <= 8 else 1
    return 1


# -- decoding and encoding with Pillow ------------------------------------------------------------


_pillow_ready = False


def _decode(data: bytes) -> Image.Image:
    """Decode the first frame with its EXIF orientation applied, as RGB or RGBA (Photon works in RGBA)."""
    global _pillow_ready
    import warnings

    from PIL import Image, UnidentifiedImageError  # here, not at the top: kept out of start-up

    if not _pillow_ready:
        # Images over 89 M pixels are still decoded (pi has no cap); the warning would print over the TUI.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        _pillow_ready = True
    try:
        image: Image.Image = Image.open(io.BytesIO(data))
        image.load()
    except UnidentifiedImageError:
        raise ImageDecodeError("unrecognized image data") from None
    except Image.DecompressionBombError as e:
        raise ImageDecodeError(str(e)) from None
    except Exception as e:  # a plugin meeting malformed data can raise anything: never a crash
        raise ImageDecodeError(str(e) or type(e).__name__) from None
    try:
        image = _to_rgb(image)
    except Exception as e:
        raise ImageDecodeError(str(e) or type(e).__name__) from None
    transpose = {
        2: Image.Transpose.FLIP_LEFT_RIGHT,
        3: Image.Transpose.ROTATE_180,
        4: Image.Transpose.FLIP_TOP_BOTTOM,
        5: Image.Transpose.TRANSPOSE,
        6: Image.Transpose.ROTATE_270,
        7: Image.Transpose.TRANSVERSE,
        8: Image.Transpose.ROTATE_90,
    }.get(exif_orientation(data))
    return image.transpose(transpose) if transpose is not None else image


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode in ("RGB", "RGBA"):
        return image
    if image.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N"):  # 16-bit grey: scale, don't clip
        image = image.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    alpha = "A" in image.getbands() or "a" in image.getbands() or "transparency" in image.info
    return image.convert("RGBA" if alpha else "RGB")


def _encode(image: Image.Image, fmt: str, quality: int = 0) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        (image.convert("RGB") if image.mode != "RGB" else image).save(out, "JPEG", quality=quality)
    else:
        image.save(out, "PNG")
    return out.getvalue()


def convert_to_png(data: bytes) -> bytes:
    """pi's convertImageBytesToPng: decode (EXIF orientation applied) and write png."""
    return _encode(_decode(data), "PNG")


# -- resizing (pi's utils/image-resize-core.js) -----------------------------------------------------


def _js_round(value: float) -> int:
    return math.floor(value + 0.5)


def resize_image(
    data: bytes,
    mime_type: str,
    options: ResizeOptions | None = None,
    check: Callable[[], None] | None = None,
) -> ResizedImage | None:
    """Fit the image in the max dimensions and the base64 byte limit; None when even 1x1 is too big.

    An image already within every limit is returned as it is (its bytes untouched). Otherwise: resize
    to the max dimensions, take the smaller of png and jpeg at the configured quality if it fits, else
    jpeg at lower qualities, else shrink by a quarter and try again.
    """
    opts = options or ResizeOptions()
    from PIL import Image

    image = _decode(data)
    width, height = image.size
    fmt = mime_type.split("/")[1] if "/" in mime_type else "png"
    if (
        width <= opts.max_width
        and height <= opts.max_height
        and math.ceil(len(data) / 3) * 4 < opts.max_bytes
    ):
        return ResizedImage(
            base64.b64encode(data).decode(), mime_type or f"image/{fmt}", width, height, width, height, False
        )
    target_w, target_h = width, height
    if target_w > opts.max_width:
        target_h = _js_round(target_h * opts.max_width / target_w)
        target_w = opts.max_width
    if target_h > opts.max_height:
        target_w = _js_round(target_w * opts.max_height / target_h)
        target_h = opts.max_height
    qualities = list(dict.fromkeys([opts.jpeg_quality, 85, 70, 55, 40]))
    w, h = target_w, target_h
    while True:
        if check is not None:
            check()
        try:
            resized = image.resize((max(1, w), max(1, h)), Image.Resampling.LANCZOS)
            png = base64.b64encode(_encode(resized, "PNG")).decode()
            jpegs = [base64.b64encode(_encode(resized, "JPEG", q)).decode() for q in qualities]
        except (OSError, ValueError):
            return None
        first: list[tuple[str, str]] = [(png, "image/png"), (jpegs[0], "image/jpeg")]
        if len(jpegs[0]) < len(png):
            first.reverse()
        for encoded, mime in [*first, *((j, "image/jpeg") for j in jpegs[1:])]:
            if len(encoded) < opts.max_bytes:
                return ResizedImage(encoded, mime, width, height, w, h, True)
        if w == 1 and h == 1:
            return None
        next_w = 1 if w == 1 else max(1, math.floor(w * 0.75))
        next_h = 1 if h == 1 else max(1, math.floor(h * 0.75))
        if (next_w, next_h) == (w, h):
            return None
        w, h = next_w, next_h


def _to_fixed_2(value: float) -> str:
    """JavaScript's ``toFixed(2)``: the exact value, ties away from zero."""
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def format_dimension_note(result: ResizedImage) -> str | None:
    """pi's note telling the model how displayed coordinates map to the original image."""
    if not result.was_resized:
        return None
    scale = result.original_width / result.width
    return (
        f"[Image: original {result.original_width}x{result.original_height}, displayed at "
        f"{result.width}x{result.height}. Multiply coordinates by {_to_fixed_2(scale)} to map to original image.]"
    )


# -- pi's processImage ---------------------------------------------------------------------------------


def _conversion_hint(source: str | None, target: str) -> str | None:
    if not source or source == target:
        return None
    return f"[Image converted from {source} to {target}.]"


def process_image(
    data: bytes,
    mime_type: str,
    *,
    auto_resize: bool = True,
    resize_options: ResizeOptions | None = None,
    check: Callable[[], None] | None = None,
) -> ProcessedImage:
    """Make an image attachable, as pi's processImage. Raises ImageDecodeError for undecodable bytes."""
    base = mime_type.split(";")[0].strip().lower()
    normalized = _SUPPORTED.get(base)
    converted_from: str | None = None
    if normalized is None:
        try:
            data = convert_to_png(data)
        except (OSError, ValueError):
            return ProcessedImage(False, message=NOT_CONVERTED)
        normalized, converted_from = "image/png", base
    if not auto_resize:
        hint = _conversion_hint(converted_from, normalized)
        return ProcessedImage(True, base64.b64encode(data).decode(), normalized, [hint] if hint else [])
    resized = resize_image(data, normalized, resize_options, check)
    if resized is None:
        return ProcessedImage(False, message=NOT_RESIZED)
    hints = [
        hint
        for hint in (_conversion_hint(converted_from, resized.mime_type), format_dimension_note(resized))
        if hint
    ]
    return ProcessedImage(True, resized.data, resized.mime_type, hints)
