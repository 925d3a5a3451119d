"""Fonts come from Python packages: every script renders with the system font folders disabled.

A fresh ``pip install`` (no root, no apt) must draw every script the renderer
supports. ``MAPTAB_FONT_DIRS=""`` replaces the system folders with none, so only the fonts that
the project's dependencies install are visible; the check runs in a fresh interpreter so no
font look-up cached by other tests leaks in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from maptab.render.fonts import DEFAULT_FONT_DIRS, font_dirs, package_font_dirs

#: One label per script the renderer has a preferred face for (fonts.SCRIPT_FONTS).
SCRIPT_LABELS = {
    "latin": ("Châtelet–Les Halles", None),
    "greek": ("Σύνταγμα", None),
    "cyrillic": ("Площадь Революции", None),
    "arabic": ("باب السلام", None),
    "hebrew": ("תחנה מרכזית", None),
    "thai": ("สนามกีฬาแห่งชาติ", None),
    "devanagari": ("राजीव चौक", None),
    "zh": ("西直门站", "zh"),
    "zh-tw": ("臺北車站", "zh-tw"),
    "ja": ("新宿三丁目駅", "ja"),
    "ko": ("강남구청역", "ko"),
}

PROBE = r"""
import json, sys
from maptab.core.network import Network
from maptab.render import check_legibility, render_map
from maptab.render.fonts import face_for_script, font_dirs, font_runs, primary_script

labels = json.loads(sys.argv[1])
out = {"dirs": [str(d) for d in font_dirs()], "scripts": {}}
for script, (text, lang) in labels.items():
    runs = font_runs(text, lang)
    # a three-station map whose every label is in this script
    names = [text, text + " 2", text + " 3"]
    net = Network.from_lines(
        {"L1": names}, positions={n: (i, 0) for i, n in enumerate(names)}
    )
    if lang:
        net.meta["language"] = lang
    result = render_map(net)
    ink = result.image.convert("L").point(lambda v: 255 if v < 128 else 0).getbbox()
    out["scripts"][script] = {
        "primary": primary_script(text, lang),
        "preferred": face_for_script(script).path if face_for_script(script) else None,
        "faces": sorted({f.path for _, f in runs}),
        "families": sorted({f.family for _, f in runs}),
        "problems": check_legibility(result.placed, net),
        "inked": ink is not None,
    }
print(json.dumps(out))
"""


def test_font_dirs_env_replaces_system_folders(monkeypatch, tmp_path):
    monkeypatch.setenv("MAPTAB_FONT_DIRS", str(tmp_path))
    dirs = font_dirs()
    assert dirs == [*package_font_dirs(), tmp_path]
    assert not any(str(d) in DEFAULT_FONT_DIRS for d in dirs)
    monkeypatch.setenv("MAPTAB_FONT_DIRS", "")
    assert font_dirs() == package_font_dirs()
    monkeypatch.delenv("MAPTAB_FONT_DIRS")
    assert font_dirs()[: len(package_font_dirs())] == package_font_dirs()


def test_font_packages_are_installed():
    names = {d.name for d in package_font_dirs()}
    assert names == {"manimgx_fonts", "noto_cjk_sans_otc"}, "reinstall maptab: font packages"


@pytest.mark.slow
def test_every_script_renders_with_packaged_fonts_only():
    env = {**os.environ, "MAPTAB_FONT_DIRS": ""}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(SCRIPT_LABELS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    pkg = [str(d) for d in package_font_dirs()]
    assert out["dirs"] == pkg
    expected_family = {
        "zh": "Noto Sans CJK SC",
        "zh-tw": "Noto Sans CJK TC",
        "ja": "Noto Sans CJK JP",
        "ko": "Noto Sans CJK KR",
        "arabic": "Noto Sans Arabic",
        "hebrew": "Noto Sans Hebrew",
        "thai": "Noto Sans Thai",
        "devanagari": "Noto Sans Devanagari",
        "latin": "Noto Sans",
        "greek": "Noto Sans",
        "cyrillic": "Noto Sans",
    }
    assert set(out["scripts"]) == set(SCRIPT_LABELS)
    for script, got in out["scripts"].items():
        assert got["primary"] == script, script
        assert got["preferred"] and any(got["preferred"].startswith(p) for p in pkg), script
        for face in got["faces"]:
            assert any(face.startswith(p) for p in pkg), f"{script}: {face} is not packaged"
        assert got["families"] == [expected_family[script]], script
        assert got["problems"] == [], f"{script}: {got['problems']}"
        assert got["inked"], script
    assert all(Path(p).is_dir() for p in pkg)
