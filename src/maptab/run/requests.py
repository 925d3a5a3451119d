"""Chat requests built from dataset samples (SPEC 11): question text, tables, map image.

A dataset directory follows the layout of the builder::

    DIR/manifest.json
    DIR/maps/<map_id>/{edges,vertices,mix}.csv, network.json, image.png
    DIR/rp.jsonl, DIR/qa.jsonl, DIR/reasonmap.jsonl

Each sample becomes one :class:`ChatRequest` (a ReasonMap row becomes two, ``<id>/short``
and ``<id>/long``): a single user message whose content parts are, in this order,

1. the sample's ``question`` (the full instruction text written by the builder);
2. one text part per table shown, ``"<Table_name> (CSV):\\n…"`` (or ``(JSON)``), the tables
   in the order of the category's inputs and the rows in the order of the sample's
   ``tables`` indices (the per-sample shuffle, SPEC 5);
3. the map image as an ``image_url`` part with a base64 data URL, when ``map`` is shown.

Images are sent within a pixel budget (:class:`ImageSpec`; by default at most 2,048 px on
the long side and 1.6 Mpx in all), resized once per map and encoding (see
:class:`ImageEncoder`), so thousands of requests on one map share one string.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from maptab._limits import open_image
from maptab.core.tables import split_lines
from maptab.io.dataset import TABLE_FILES, Dataset, DatasetError, Sample, Table, read_table
from maptab.tasks.base import get as get_kind

Kind = str  # a task kind's name (:mod:`maptab.tasks`)
TABLE_TITLES = {"edges": "Edge_tab", "vertices": "Vertex_tab", "mix": "Mix_tab"}
DEFAULT_MAX_SIDE = 2048
"""Longest side, in pixels, of an image sent (SPEC 11): OpenAI first fits a high-detail
image within 2,048 × 2,048, Anthropic within 1,568 px on the long side."""
DEFAULT_MAX_PIXELS = 1_600_000
"""Width × height of an image sent (SPEC 11): OpenAI keeps at most 1,536 patches of 32 × 32
px (1.57 Mpx; high detail: 768 × 2,048), Anthropic about 1.15 Mpx. With
:data:`DEFAULT_MAX_SIDE`, whichever is stricter, the budget is just above what those APIs
keep, so their own resize, not ours, sets the final detail, and a 278 Mpx map is sent as
about 1,064 × 1,503 px instead of a request no API accepts."""


@dataclass(slots=True)
class ChatRequest:
    """One request to a model.

    ``messages`` are in the OpenAI chat format (image parts as data URLs). ``meta`` carries
    what baselines and the run store need: ``map_id``, ``category`` (RP) or ``type`` (QA),
    ``variant`` (ReasonMap ``short``/``long``), ``dataset`` (its directory), ``sample``
    (the dataset row as a dict) and ``record`` (the row decoded by its task kind).
    ``tools`` are the function schemas offered to the model (tool-use mode,
    :mod:`maptab.run.tools`; ``None``: none, and none is sent).
    """

    id: str
    kind: Kind
    messages: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class ImageSpec:
    """How map images are prepared (SPEC 11).

    ``mode="fit"`` scales the image down (never up, aspect ratio kept) within the budget:
    ``width × height ≤ max_pixels`` and ``max(width, height) ≤ max_side``, whichever is
    stricter; ``None`` lifts a limit, and with both ``None`` the original size is sent.
    ``mode="stretch"`` resizes to exactly ``size`` (models that need a fixed shape).
    ``format`` is ``png`` or ``jpeg``. The file on disk is never changed.
    """

    max_pixels: int | None = DEFAULT_MAX_PIXELS
    mode: Literal["fit", "stretch"] = "fit"
    size: tuple[int, int] | None = None
    format: Literal["png", "jpeg"] = "png"
    max_side: int | None = DEFAULT_MAX_SIDE

    def __post_init__(self) -> None:
        if self.mode not in ("fit", "stretch"):
            raise DatasetError(f"image mode must be 'fit' or 'stretch', not {self.mode!r}")
        if self.mode == "stretch" and (self.size is None or min(self.size) < 1):
            raise DatasetError("image mode 'stretch' needs a size WIDTHxHEIGHT")
        if self.max_pixels is not None and self.max_pixels < 1:
            raise DatasetError("the image pixel budget must be positive")
        if self.max_side is not None and self.max_side < 1:
            raise DatasetError("the image side budget must be positive")
        if self.format not in ("png", "jpeg"):
            raise DatasetError(f"image format must be 'png' or 'jpeg', not {self.format!r}")

    def target(self, width: int, height: int) -> tuple[int, int]:
        """The output size for a ``width × height`` source."""
        if self.mode == "stretch":
            assert self.size is not None
            return self.size
        area, side = self.max_pixels, self.max_side
        scale = 1.0
        if area is not None and width * height > area:
            scale = math.sqrt(area / (width * height))
        if side is not None and max(width, height) * scale > side:
            scale = side / max(width, height)
        if scale >= 1.0:
            return width, height
        w, h = max(1, round(width * scale)), max(1, round(height * scale))
        # guard against rounding up past the budget (1 × 1 is always within it)
        while (area is not None and w * h > area) or (side is not None and max(w, h) > side):
            w, h = (w - 1, h) if w >= h else (w, h - 1)
        return w, h

    def tag(self) -> str:
        """A short name of the spec, for cache files and prediction rows."""
        if self.size:
            size = f"{self.size[0]}x{self.size[1]}"
        else:
            size = "none" if self.max_pixels is None else str(self.max_pixels)
            size += "" if self.max_side is None else f"-{self.max_side}px"
        return f"{self.mode}-{size}.{self.format}"


def parse_image_budget(text: str, what: str = "image budget") -> tuple[int | None, int | None]:
    """``(max_pixels, max_side)`` of an image budget written ``2048px`` (long side),
    ``1.6mp`` (megapixels, 10^6 px), both comma-separated (``2048px,1.6mp``), or ``none``
    (originals); a malformed budget is one line naming it."""
    spec = text.strip().lower()
    if spec == "none":
        return None, None
    pixels: int | None = None
    side: int | None = None
    for part in (p.strip() for p in spec.split(",")):
        if (m := re.fullmatch(r"(\d+)\s*px", part)) and side is None and int(m[1]) >= 1:
            side = int(m[1])
        elif (
            (m := re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*mp", part))
            and pixels is None
            and round(float(m[1]) * 1_000_000) >= 1
        ):
            pixels = round(float(m[1]) * 1_000_000)
        else:
            raise DatasetError(
                f"{what} {text!r}: expected SIDEpx, MEGAPIXELSmp, both "
                "comma-separated (2048px,1.6mp), or none"
            )
    return pixels, side


class ImageEncoder:
    """Resize and base64-encode each map image once, caching in memory and on disk.

    The disk cache (``cache_dir``, e.g. ``RUN_DIR/.cache/images``) holds the encoded bytes,
    keyed by map, :class:`ImageSpec` and the source file's size and modification time, so a
    resumed run does not re-encode. ``encoded`` counts images actually resized.
    """

    def __init__(self, spec: ImageSpec, cache_dir: Path | None = None) -> None:
        self.spec = spec
        self.cache_dir = cache_dir
        self._memory: dict[Path, str] = {}
        self.encoded = 0

    def data_url(self, path: Path) -> str:
        """The ``data:image/…;base64,…`` URL of the prepared image at ``path``."""
        url = self._memory.get(path)
        if url is None:
            url = self._load(path)
            self._memory[path] = url
        return url

    def _load(self, path: Path) -> str:
        if not path.exists():
            raise DatasetError(f"{path}: map image missing (render the dataset's maps first)")
        st = path.stat()
        mime = f"image/{self.spec.format}"
        key = hashlib.sha256(f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
        cached = self.cache_dir / f"{key[:24]}.{self.spec.tag()}" if self.cache_dir else None
        if cached is not None and cached.is_file():
            data = cached.read_bytes()
        else:
            data = self._encode(path)
            self.encoded += 1
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                # a name of this process's own: run workers may encode one image at once
                tmp = cached.with_suffix(f"{cached.suffix}.{os.getpid()}.tmp")
                tmp.write_bytes(data)
                tmp.replace(cached)
        return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"

    def _encode(self, path: Path) -> bytes:
        """The prepared image's bytes. Only this one image is decoded at full size, and only
        until it is resized (a 278 Mpx RGB map takes 0.8 GB for a few seconds); the file on
        disk is left as it is."""
        data, _ = prepared_image(decoded_image(path), self.spec, path)
        return data


def _resized(im: Any, size: tuple[int, int]) -> Any:
    """``im`` resized to ``size`` with Lanczos. A palette or bilevel image is converted first
    (Pillow resizes those modes by nearest neighbour). A box reduction by a whole factor
    first (``reducing_gap=3``, which Pillow documents as indistinguishable from Lanczos
    alone) makes a 278 Mpx map five times faster to scale: 1.4 instead of 6.8 s, a mean
    difference of 0.1 of 255."""
    from PIL import Image

    if im.mode in ("P", "PA"):
        rgba = im.mode == "PA" or "transparency" in im.info
        im = im.convert("RGBA" if rgba else "RGB")
    elif im.mode == "1":
        im = im.convert("L")
    return im.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)


def decoded_image(path: Path) -> Any:
    """The image at ``path``, decoded (:class:`DatasetError` naming the file when it is not a
    readable image or is too large): what :func:`crop_image` cuts from."""
    with open_image(path, error=DatasetError) as im:
        try:
            im.load()
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{path}: not a readable image ({exc})") from None
        return im


def crop_image(
    source: Path | Any, box: tuple[float, float, float, float], spec: ImageSpec
) -> tuple[bytes, tuple[int, int], tuple[int, int]]:
    """``(bytes, sent size, crop size)`` of the part of the original image inside ``box``
    (``x0, y0, x1, y1`` normalised to [0, 1] from the top-left corner), prepared as the whole
    map is (:class:`ImageSpec`: the same budget, resize and format). ``source`` is the image
    file, or the image :func:`decoded_image` read from it (a caller cutting one map many times
    decodes it once). A crop is at least 1 px a side."""

    im = decoded_image(source) if isinstance(source, str | os.PathLike) else source
    x0, y0, x1, y1 = box
    w, h = im.size
    left, top = min(w - 1, math.floor(x0 * w)), min(h - 1, math.floor(y0 * h))
    right, bottom = max(left + 1, math.ceil(x1 * w)), max(top + 1, math.ceil(y1 * h))
    crop = im.crop((left, top, min(w, right), min(h, bottom)))
    data, size = prepared_image(crop, spec, source)
    return data, size, crop.size


def prepared_image(im: Any, spec: ImageSpec, source: object) -> tuple[bytes, tuple[int, int]]:
    """``(bytes, size)`` of ``im`` resized into ``spec``'s budget (never up) and encoded in its
    format (JPEG: transparent areas on white, not black); :class:`DatasetError` naming
    ``source`` when Pillow refuses it."""
    from PIL import Image

    try:
        size = spec.target(*im.size)
        out = im if size == im.size else _resized(im, size)
        if spec.format == "jpeg":
            rgba = out.convert("RGBA")
            out = Image.new("RGB", rgba.size, "white")
            out.paste(rgba, mask=rgba.getchannel("A"))
        elif out.mode not in ("RGB", "RGBA", "L", "LA", "P"):
            out = out.convert("RGBA")
        buf = io.BytesIO()
        out.save(buf, format=spec.format.upper(), optimize=False)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{source}: not a readable image ({exc})") from None
    return buf.getvalue(), out.size


# --------------------------------------------------------------------------- tables
def _select(
    table: Table, order: Sequence[int] | None, keep: Sequence[str] | None, drop: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    cols = [c for c in table.columns if (keep is None or c in keep) and c not in drop]
    idx = [table.columns.index(c) for c in cols]
    order = range(len(table.rows)) if order is None else order
    return cols, [[table.rows[i][j] for j in idx] for i in order]


def table_text(
    table: Table,
    *,
    order: Sequence[int] | None = None,
    keep: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    fmt: Literal["csv", "json"] = "csv",
) -> str:
    """The table as shown to a model: selected columns, rows in ``order``.

    CSV keeps the cells exactly as written in the dataset (``\\n`` line ends, no BOM). JSON
    is a list of objects, one per line; numeric cells become numbers and ``Line`` becomes a
    list (:func:`maptab.core.tables.split_lines`), as in MapTab's JSON tables.
    """
    cols, rows = _select(table, order, keep, drop)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    objs = [{c: _json_cell(c, v) for c, v in zip(cols, row, strict=True)} for row in rows]
    return "[\n" + ",\n".join(json.dumps(o, ensure_ascii=False) for o in objs) + "\n]"


def _json_cell(column: str, value: str) -> Any:
    if column == "Line":
        return split_lines(value)
    if column in ("Edge", "Vertex"):
        return value
    try:
        num = float(value)
    except ValueError:
        return value
    return int(num) if num.is_integer() and "." not in value else num


# --------------------------------------------------------------------------- dataset
def iter_samples(
    dataset_dir: str | Path,
    *,
    split: str | None = None,
    categories: Iterable[str] | None = None,
    limit: int | None = None,
    verify: bool = True,
) -> Iterator[Sample]:
    """The samples of a dataset, filtered: :meth:`maptab.io.dataset.Dataset.samples` (each row
    checked against its schema as it is read; with ``verify`` each file is first checked
    against the manifest's hash)."""
    ds = Dataset(dataset_dir, verify=verify)
    return ds.samples(split=split, categories=categories, limit=limit)


class RequestBuilder:
    """Turns :class:`Sample` rows into :class:`ChatRequest` objects for one dataset.

    Map tables are read once per map and kept; images go through one :class:`ImageEncoder`.
    With ``images=False`` no image part is attached; with ``messages=False`` the message
    holds the question text only, with neither tables nor image (for providers that answer
    from ``meta``, such as the baselines: their :attr:`~maptab.run.provider.Provider` flag
    ``uses_messages`` is false). The tables' row indices are checked either way, so a
    malformed dataset stops every run alike.
    """

    def __init__(
        self,
        dataset_dir: str | Path,
        *,
        table_format: Literal["csv", "json"] = "csv",
        image: ImageSpec | None = None,
        images: bool = True,
        cache_dir: Path | None = None,
        verify: bool = True,
        messages: bool = True,
    ) -> None:
        if table_format not in ("csv", "json"):
            raise DatasetError(f"table format must be 'csv' or 'json', not {table_format!r}")
        self.dataset = Dataset(dataset_dir, verify=verify)
        self.root = self.dataset.root
        self.table_format = table_format
        self.images = images
        self.messages = messages
        self.encoder = ImageEncoder(image or ImageSpec(), cache_dir)
        self._tables: dict[tuple[str, str], Table] = {}
        self._dirs: dict[str, Path] = {}

    def map_dir(self, map_id: str) -> Path:
        """The map's folder; an unknown map or a path leaving the dataset is an error."""
        if map_id not in self._dirs:
            self._dirs[map_id] = self.dataset.map_dir(map_id)
        return self._dirs[map_id]

    def table(self, map_id: str, kind: str) -> Table:
        key = (map_id, kind)
        if key not in self._tables:
            self.map_dir(map_id)
            self._tables[key] = read_table(self.dataset.table_path(map_id, kind))
        return self._tables[key]

    def forget_maps(self) -> None:
        """Drop the map tables read so far (a caller going map by map keeps one map's)."""
        self._tables.clear()

    def request(self, sample: Sample) -> ChatRequest:
        """The chat request for one sample (see the module docstring for its layout)."""
        rec = sample.record
        self.map_dir(sample.map_id)
        meta: dict[str, Any] = {
            "map_id": sample.map_id,
            "dataset": str(self.root),
            "verify": self.dataset.verify_files,
            "sample": sample.row,
            "record": sample.record,
        }
        shown = get_kind(sample.kind).prompt(rec, sample.variant)
        meta.update(shown.meta)
        inputs, text, tables, keep, drop = (
            shown.inputs,
            shown.text,
            shown.tables,
            shown.keep,
            shown.drop,
        )
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
        label = self.table_format.upper()
        for name in inputs:
            if name not in TABLE_FILES:
                continue
            tab = self.table(sample.map_id, name)
            order = tables.get(name)
            if order and (min(order) < 0 or max(order) >= len(tab.rows)):
                raise DatasetError(f"{sample.id}: 'tables.{name}' has a row index out of range")
            if not self.messages:
                continue
            body = table_text(tab, order=order, keep=keep, drop=drop, fmt=self.table_format)
            parts.append({"type": "text", "text": f"{TABLE_TITLES[name]} ({label}):\n{body}"})
        if "map" in inputs and self.images and self.messages:
            image = self.dataset.image_path(sample.map_id)
            if image is None:
                raise DatasetError(
                    f"{self.root / 'maps' / sample.map_id / 'image.png'}: map image missing "
                    "(render the dataset's maps first)"
                )
            url = self.encoder.data_url(image)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        return ChatRequest(sample.id, sample.kind, [{"role": "user", "content": parts}], meta)


def build_requests(
    dataset_dir: str | Path,
    *,
    split: str | None = None,
    categories: Iterable[str] | None = None,
    limit: int | None = None,
    table_format: Literal["csv", "json"] = "csv",
    image_budget: int | None = DEFAULT_MAX_PIXELS,
    image_max_side: int | None = DEFAULT_MAX_SIDE,
    image_mode: Literal["fit", "stretch"] = "fit",
    image_size: tuple[int, int] | None = None,
    image_format: Literal["png", "jpeg"] = "png",
    images: bool = True,
    cache_dir: Path | None = None,
    verify: bool = True,
    messages: bool = True,
) -> list[ChatRequest]:
    """All chat requests of a dataset (filtered as :func:`iter_samples` says).

    ``image_budget`` (pixels) and ``image_max_side`` are :class:`ImageSpec`'s ``max_pixels``
    and ``max_side``. Raises :class:`DatasetError` (one line naming file and row) on a
    malformed dataset. ``maptab run`` builds the same requests lazily, one just before it
    is sent.
    """
    spec = ImageSpec(image_budget, image_mode, image_size, image_format, image_max_side)
    builder = RequestBuilder(
        dataset_dir,
        table_format=table_format,
        image=spec,
        images=images,
        cache_dir=cache_dir,
        verify=verify,
        messages=messages,
    )
    samples = iter_samples(
        dataset_dir, split=split, categories=categories, limit=limit, verify=verify
    )
    return [builder.request(s) for s in samples]
