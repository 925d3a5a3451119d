"""Map images are sent within a pixel budget (SPEC 11), and absurd ones refused (SPEC 16)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from typer.testing import CliRunner

from fakeserver import FakeServer, rehash, write_dataset
from maptab import _limits as limits
from maptab.cli import app
from maptab.io.dataset import DatasetError
from maptab.run.requests import (
    DEFAULT_MAX_PIXELS,
    DEFAULT_MAX_SIDE,
    ImageEncoder,
    ImageSpec,
    build_requests,
    parse_image_budget,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MAPS = SHARED / "reasonmap-maps"


def _map(path: Path, size: tuple[int, int], mode: str = "RGB") -> Path:
    """A cheap synthetic map: a flat background, a few lines and rings."""
    w, h = size
    im = Image.new(mode, size, 0 if mode == "P" else (238, 238, 230))
    if mode == "P":
        im.putpalette([255, 255, 255, 0, 0, 0, 200, 30, 40])
    draw = ImageDraw.Draw(im)
    ink = (lambda c: c) if mode != "P" else (lambda c: 1 if c == (0, 0, 0) else 2)
    for i in range(6):
        draw.line([(i * w // 6, 0), (w - i * w // 7, h - 1)], fill=ink((200, 30, 40)), width=9)
        box = [(i * w // 7, i * h // 7), (i * w // 7 + h // 10, i * h // 7 + h // 10)]
        draw.ellipse(box, outline=ink((0, 0, 0)), width=5)
    im.save(path, compress_level=1)
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sent(url: str) -> bytes:
    head, data = url.split(",", 1)
    assert head == "data:image/png;base64"
    return base64.b64decode(data)


def _image_url(req) -> str:
    (msg,) = req.messages
    (part,) = [p for p in msg["content"] if p["type"] == "image_url"]
    return part["image_url"]["url"]


def _dataset(tmp_path: Path, source: Path) -> Path:
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    (ds / "maps/m1/image.png").write_bytes(source.read_bytes())
    return rehash(ds)


def _within(size: tuple[int, int], source: tuple[int, int], spec: ImageSpec) -> None:
    (w, h), (sw, sh) = size, source
    assert spec.max_pixels is None or w * h <= spec.max_pixels
    assert spec.max_side is None or max(w, h) <= spec.max_side
    assert abs(w / h - sw / sh) <= (sw / sh) * (1 / min(w, h) + 1 / max(w, h))  # 1 px


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width × height`` and holds no pixels (never decoded here)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b""))


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> Path:
    return _map(tmp_path_factory.mktemp("large") / "large.png", (9000, 6000))


def test_default_budget_is_the_stricter_of_side_and_area():
    spec = ImageSpec()
    assert (spec.max_pixels, spec.max_side) == (DEFAULT_MAX_PIXELS, DEFAULT_MAX_SIDE)
    assert (DEFAULT_MAX_PIXELS, DEFAULT_MAX_SIDE) == (1_600_000, 2048)
    assert spec.target(14032, 19843) == (1064, 1503)  # area binds: a 278 Mpx map
    assert spec.target(8000, 1000) == (2048, 256)  # side binds: a long strip
    assert spec.target(800, 600) == (800, 600)  # never upscaled
    assert parse_image_budget("2048px,1.6mp") == (1_600_000, 2048)
    assert parse_image_budget(" 1568PX ") == (None, 1568)
    assert parse_image_budget("1.15mp") == (1_150_000, None)
    assert parse_image_budget("none") == (None, None)
    for bad in ("2048", "0px", "1mp,2mp", "", "big"):
        with pytest.raises(DatasetError, match="--image-budget .*: expected SIDEpx"):
            parse_image_budget(bad, "--image-budget")


def test_a_large_map_is_sent_downscaled_within_the_budget(tmp_path, large):
    ds = _dataset(tmp_path, large)
    before = _sha(ds / "maps/m1/image.png")
    (req,) = build_requests(ds, limit=1)
    sent = Image.open(io.BytesIO(_sent(_image_url(req))))
    _within(sent.size, (9000, 6000), ImageSpec())
    assert sent.size == (1548, 1033) and sent.mode == "RGB"
    assert _sha(ds / "maps/m1/image.png") == before  # the original is left as it is


def test_a_small_map_is_sent_as_before(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0, image=(800, 600))
    path = ds / "maps/m1/image.png"
    (req,) = build_requests(ds, limit=1)
    buf = io.BytesIO()
    with Image.open(path) as im:
        im.save(buf, format="PNG", optimize=False)  # decoded and re-encoded, not resized
    assert _sent(_image_url(req)) == buf.getvalue()
    unbounded = ImageEncoder(ImageSpec(4_194_304, max_side=None)).data_url(path)
    assert _image_url(req) == unbounded


def test_none_sends_the_original_size_and_pixels(tmp_path):
    source = _map(tmp_path / "wide.png", (2600, 900))
    ds = _dataset(tmp_path, source)
    pixels, side = parse_image_budget("none")
    (req,) = build_requests(ds, limit=1, image_budget=pixels, image_max_side=side)
    sent = Image.open(io.BytesIO(_sent(_image_url(req))))
    with Image.open(source) as original:
        assert sent.size == original.size == (2600, 900)
        assert sent.tobytes() == original.tobytes()
    (req,) = build_requests(ds, limit=1)  # the default budget: the long side binds
    assert Image.open(io.BytesIO(_sent(_image_url(req)))).size == (2048, 709)


def test_a_palette_map_is_resized_with_lanczos_not_nearest(tmp_path):
    source = _map(tmp_path / "palette.png", (3000, 1000), mode="P")
    (req,) = build_requests(_dataset(tmp_path, source), limit=1)
    sent = Image.open(io.BytesIO(_sent(_image_url(req))))
    assert sent.size == (2048, 683) and sent.mode == "RGB"
    assert len(sent.getcolors(1 << 24) or ()) > 3  # smoothed edges: more than the 3 inks


def test_a_278_mpx_map_is_opened_and_pillow_keeps_its_own_limit(tmp_path):
    path = tmp_path / "kl.png"
    path.write_bytes(_png_header(14032, 19843))
    saved = Image.MAX_IMAGE_PIXELS
    with limits.open_image(path) as im:  # the header only: nothing is decoded
        assert im.size == (14032, 19843)
    assert saved == Image.MAX_IMAGE_PIXELS  # raised inside open_image only
    if saved is not None and 2 * saved < 14032 * 19843:
        with pytest.raises(Image.DecompressionBombError):
            Image.open(path)


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ((21_000, 20_000), r"image of 21000×20000 pixels is over the limit of 400,000,000 pixels"),
        ((60_000, 60_000), r"image too large \("),
    ],
)
def test_an_absurd_map_is_refused_in_one_line(tmp_path, size, message):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    (ds / "maps/m1/image.png").write_bytes(_png_header(*size))
    rehash(ds)
    with pytest.raises(DatasetError, match=r"image\.png: " + message) as err:
        build_requests(ds, limit=1)
    assert "\n" not in str(err.value)


def test_run_sends_within_image_budget_and_records_it(tmp_path):
    ds = _dataset(tmp_path, _map(tmp_path / "wide.png", (2600, 1200)))
    runner = CliRunner()
    with FakeServer() as srv:
        base = ["run", str(ds), "--model", "openai:m", "--base-url", srv.base_url]
        out = tmp_path / "run"
        res = runner.invoke(app, [*base, "--image-budget", "1000px", "--out", str(out)])
        assert res.exit_code == 0, res.output
        (sent,) = srv.requests
        (part,) = [p for p in sent["body"]["messages"][0]["content"] if p["type"] == "image_url"]
        assert Image.open(io.BytesIO(_sent(part["image_url"]["url"]))).size == (1000, 462)
        record = json.loads((out / "run.json").read_text(encoding="utf-8"))
        assert record["image"] == {
            "max_pixels": None,
            "mode": "fit",
            "size": None,
            "format": "png",
            "max_side": 1000,
        }
        res = runner.invoke(app, [*base, "--image-budget", "2k", "--out", str(tmp_path / "o")])
        assert res.exit_code == 1 and "Traceback" not in res.output
        assert "--image-budget '2k': expected SIDEpx" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
        assert len(srv.requests) == 1  # the refused run sent nothing


@pytest.mark.conformance
@pytest.mark.parametrize("city", ["kuala", "dubai"])
def test_a_real_map_is_sent_within_the_budget(city):
    """The largest real maps (Kuala Lumpur 278 Mpx, Dubai 140 Mpx) when the shared data has
    them; the file is left untouched."""
    found = sorted(MAPS.rglob(f"*{city}*.png")) if MAPS.is_dir() else []
    if not found:
        pytest.skip(f"no {city!r} map image under {MAPS}")
    path = found[0]
    before = _sha(path)
    with limits.open_image(path) as im:
        source = im.size
    url = ImageEncoder(ImageSpec()).data_url(path)
    sent = Image.open(io.BytesIO(_sent(url)))
    _within(sent.size, source, ImageSpec())
    assert len(url) < 8 * 1024 * 1024  # a request an API accepts
    assert _sha(path) == before


def test_a_transparent_map_sent_as_jpeg_is_on_white(tmp_path):
    source = tmp_path / "clear.png"
    im = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
    ImageDraw.Draw(im).rectangle((10, 10, 20, 20), fill=(200, 0, 0, 255))
    im.save(source)
    (req,) = build_requests(_dataset(tmp_path, source), limit=1, image_format="jpeg")
    head, data = _image_url(req).split(",", 1)
    assert head == "data:image/jpeg;base64"
    sent = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
    assert all(c > 245 for c in sent.getpixel((2, 2)))  # transparent: white, not black
    r, g, b = sent.getpixel((15, 15))
    assert r > 150 and g < 60 and b < 60  # the drawn line kept
