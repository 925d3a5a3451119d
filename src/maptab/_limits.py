"""Explicit limits on what maptab reads, and the shared readers that enforce them (SPEC 16).

Every file maptab reads from a user is finite and bounded: it must be a *regular* file (a
FIFO or a device such as ``/dev/zero`` is refused before anything is read), and tables,
JSON documents and images have a size cap. JSON nesting beyond the parser's recursion limit
is an error, not a crash. The numbers are listed (and justified) in ``docs/reference/limits.md``; each
is far above what a MapTab- or ReasonMap-sized dataset needs.
"""

from __future__ import annotations

import json
import math
import os
import stat
import threading
import warnings
from pathlib import Path
from typing import IO, Any

import msgspec

from maptab.errors import MaptabError

MIB = 1024 * 1024

MAX_TABLE_BYTES = 2 * MIB
"""An Edge_tab / Vertex_tab / Mix_tab file (MapTab's largest is about 20 KB, a paper-preset
map's about 46 KB; reading and checking 2 MiB takes a few seconds)."""

MAX_JSON_BYTES = 64 * MIB
"""A JSON document read whole: ``manifest.json``, ``network.json``, ``run.json``,
``summary.json``, a MapTab release query file (a paper-preset manifest is 0.2 MB)."""

MAX_RESULTS_BYTES = 1024 * MIB
"""Another tool's results JSON (``maptab score --results``): 200,000 samples with their
question and answer text come to a few hundred MB."""

MAX_IMAGE_PIXELS = 400_000_000
"""Width × height of a map image that is opened (SPEC 16): real maps reach 278 Mpx
(ReasonMap's Kuala Lumpur, 14,032 × 19,843; a paper-size map is 16 Mpx), so the ceiling is
20,000 × 20,000 px, 1.2 GB decoded as RGB. Above it an image is refused from its header,
never decoded. Pillow's own guard (about 179 Mpx) is raised to this ceiling, and only while
:func:`open_image` opens a file."""

MAX_RENDER_PIXELS = 64_000_000
"""Width × height of a map that maptab draws (8,000 × 8,000; a paper-size map is 16 Mpx)."""

MAX_RENDER_SCALE = 4.0
"""``maptab render --scale``: at most four times the paper-like size."""

MAX_LABEL_CHARS = 200
"""A station, spot or line name drawn on a map (the longest real one is under 60)."""

MAX_RESPONSE_CHARS = 100_000
"""A model's answer that is parsed; a longer one is scored as a format error (the papers'
answers are at most 2,048 tokens, about 10,000 characters; reasoning is stored apart)."""


_PIL_GUARD = threading.Lock()  # Pillow's limit is a module global: one change at a time


class LimitError(MaptabError):
    """An input that is not a regular file, or is over one of the limits above."""


def _open_regular(path: Path, error: type[MaptabError]) -> tuple[int, os.stat_result]:
    """An OS file descriptor of ``path``, opened without blocking and checked to be a
    regular file (``O_NONBLOCK`` keeps a FIFO from hanging the ``open`` itself)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the file ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
        raise error(f"{path}: is {kind}, not a regular file")
    return fd, st


def open_regular(
    path: str | os.PathLike[str],
    *,
    binary: bool = False,
    encoding: str = "utf-8",
    error: type[MaptabError] = LimitError,
    buffering: int = -1,
) -> IO[Any]:
    """``path`` opened for reading (text, or bytes with ``binary``), refused unless it is a
    regular file; ``buffering`` as :func:`open` takes it (bytes only)."""
    fd, _ = _open_regular(Path(path), error)
    os.set_blocking(fd, True)
    if binary:
        return open(fd, "rb", buffering=buffering)  # noqa: SIM115 (the caller closes it)
    return open(fd, encoding=encoding)  # noqa: SIM115


def read_bytes(
    path: str | os.PathLike[str], limit: int, *, error: type[MaptabError] = LimitError
) -> bytes:
    """The bytes of the regular file ``path``; over ``limit`` bytes is an error naming it."""
    p = Path(path)
    fd, st = _open_regular(p, error)
    try:
        if st.st_size > limit:
            raise error(f"{p}: {st.st_size:,} bytes, over the limit of {limit:,} bytes")
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # the file grew while it was read
        raise error(f"{p}: over the limit of {limit:,} bytes")
    return data


_DECODE = msgspec.json.Decoder().decode


def loads_json(
    text: str | bytes, where: str | os.PathLike[str], *, error: type[MaptabError] = LimitError
) -> Any:
    """``json.loads`` with every failure (syntax, nesting too deep, an integer too long)
    as one ``error`` naming ``where``.

    The text is decoded by msgspec first (4-5x faster on dataset rows: 46 -> 10 us); what
    msgspec refuses — a syntax error, but also what ``json.loads`` accepts and msgspec does
    not (``NaN``, ``1e400``, a lone surrogate escape, a UTF-16 or BOM-prefixed ``bytes``) —
    goes to ``json.loads``, so the value or the error is the one ``json.loads`` gives
    (checked against it by ``tests/test_loads_json.py``). The one exception: nesting a few
    levels short of the recursion limit, where each parser's limit depends on the stack
    (msgspec decodes 997 levels, ``json.loads`` here about 990)."""
    try:
        return _DECODE(text)
    except (msgspec.DecodeError, ValueError, RecursionError):
        pass
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"{where}: not valid JSON ({exc})") from None


def read_json(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_JSON_BYTES,
    error: type[MaptabError] = LimitError,
) -> Any:
    """The JSON document in the regular file ``path`` (UTF-8, a BOM tolerated)."""
    data = read_bytes(path, limit, error=error)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    return loads_json(text, path, error=error)


def check_image_size(
    width: int, height: int, where: str | os.PathLike[str], limit: int = MAX_IMAGE_PIXELS
) -> None:
    """Refuse an image over ``limit`` pixels before its pixels are decoded or drawn."""
    if width * height > limit:
        raise LimitError(
            f"{where}: image of {width}×{height} pixels is over the limit of {limit:,} pixels"
        )


def open_image(path: str | os.PathLike[str], *, error: type[MaptabError] = LimitError) -> Any:
    """A lazily decoded ``PIL.Image`` of the regular file ``path``, its size checked against
    :data:`MAX_IMAGE_PIXELS` from the header (a decompression bomb is refused, not decoded;
    SPEC 16)."""
    from PIL import Image, UnidentifiedImageError

    fd, _ = _open_regular(Path(path), error)
    os.close(fd)
    try:
        # the size is checked below, against our own limit: Pillow's guard (an error at twice
        # its MAX_IMAGE_PIXELS) is raised to that limit for this call only
        with _PIL_GUARD, warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            saved = Image.MAX_IMAGE_PIXELS
            if saved is not None and saved < MAX_IMAGE_PIXELS:
                Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
            try:
                im = Image.open(path)
            finally:
                Image.MAX_IMAGE_PIXELS = saved
    except Image.DecompressionBombError as exc:
        raise error(f"{path}: image too large ({exc})") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise error(f"{path}: not a readable image ({exc})") from None
    try:
        check_image_size(*im.size, path)
    except LimitError as exc:
        im.close()
        raise error(str(exc)) from None
    return im


def check_label(text: str, what: str) -> None:
    """Refuse a name to be drawn that is longer than :data:`MAX_LABEL_CHARS`."""
    if len(text) > MAX_LABEL_CHARS:
        raise LimitError(
            f"{what} {text[:40]!r}… has {len(text):,} characters, over the limit of "
            f"{MAX_LABEL_CHARS} for a label on a map"
        )


def non_finite_field(value: Any, path: str = "") -> str | None:
    """The path (``weights[1]``, ``params.value``) of the first number in a JSON value that
    is not finite (NaN, an infinity, or too large for a float), or ``None``."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        items: Any = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for at, v in items:
        found = non_finite_field(v, at)
        if found is not None:
            return found
    return None
