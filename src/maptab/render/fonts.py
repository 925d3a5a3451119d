"""Font selection per script, from fonts installed with the project (SPEC 15).

Fonts come first from Python packages that are normal dependencies of maptab, so a plain
``pip install`` draws every script without root: ``manimgx-fonts`` (Noto Sans for Latin,
Greek, Cyrillic, and Noto Sans Arabic, Hebrew, Thai, Devanagari, …) and ``noto-cjk-sans-otc``
(Noto Sans CJK SC/TC/JP/KR), both under the SIL Open Font License 1.1. System font folders
are a fallback. ``MAPTAB_FONT_DIRS`` (``os.pathsep``-separated) *replaces* the system folders
(set it empty to use the packaged fonts only); nothing is downloaded at run time.

A label is drawn with the face of its *primary script* (its first character that is not
Latin or common punctuation): Arabic, Hebrew, Thai, Devanagari, Cyrillic, Greek, Han, kana
and Hangul each have a preferred face; Han text uses the Simplified Chinese face unless the
label has kana (Japanese), Hangul (Korean) or a language hint says otherwise. A character the
primary face lacks falls back to the first installed face whose ``cmap`` has it, and a
character no installed face has raises :class:`MissingGlyphError` (never a tofu box).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from fontTools.ttLib import TTCollection, TTFont

from maptab.errors import MaptabError

#: Python packages (import names) whose folders hold fonts; searched before any other folder.
FONT_PACKAGES = ("manimgx_fonts", "noto_cjk_sans_otc")

#: System font folders, used when ``MAPTAB_FONT_DIRS`` is not set.
DEFAULT_FONT_DIRS = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    str(Path.home() / ".local" / "share" / "fonts"),
)

#: Preferred font files per script, best first. CJK scripts name a face of the collection.
SCRIPT_FONTS: dict[str, tuple[str, ...]] = {
    "latin": ("NotoSans[wght].ttf", "NotoSans-Regular.ttf", "DejaVuSans.ttf"),
    "greek": ("NotoSans[wght].ttf", "NotoSans-Regular.ttf", "DejaVuSans.ttf"),
    "cyrillic": ("NotoSans[wght].ttf", "NotoSans-Regular.ttf", "DejaVuSans.ttf"),
    "arabic": (
        "NotoSansArabic[wght].ttf",
        "NotoSansArabic-Regular.ttf",
        "NotoNaskhArabic-Regular.ttf",
    ),
    "hebrew": ("NotoSansHebrew[wght].ttf", "NotoSansHebrew-Regular.ttf"),
    "thai": (
        "NotoSansThai[wght].ttf",
        "NotoSansThai-Regular.ttf",
        "NotoLoopedThai-Regular.ttf",
        "NotoSerifThai-Regular.ttf",
    ),
    "devanagari": ("NotoSansDevanagari[wght].ttf", "NotoSansDevanagari-Regular.ttf"),
    "zh": ("NotoSansCJK-Regular.ttc#Noto Sans CJK SC",),
    "zh-tw": ("NotoSansCJK-Regular.ttc#Noto Sans CJK TC",),
    "ja": ("NotoSansCJK-Regular.ttc#Noto Sans CJK JP",),
    "ko": ("NotoSansCJK-Regular.ttc#Noto Sans CJK KR",),
}

#: Unicode blocks that decide a character's script (inclusive ranges).
_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"),
    (0x08A0, 0x08FF, "arabic"),
    (0x0900, 0x097F, "devanagari"),
    (0x0E00, 0x0E7F, "thai"),
    (0x1100, 0x11FF, "hangul"),
    (0x2E80, 0x2FDF, "han"),
    (0x3000, 0x303F, "cjk"),
    (0x3040, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"),
    (0x31F0, 0x31FF, "kana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0xFB1D, 0xFB4F, "hebrew"),
    (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"),
    (0xFF00, 0xFFEF, "cjk"),
    (0x20000, 0x2FFFF, "han"),
)

RTL_SCRIPTS = frozenset({"arabic", "hebrew"})
#: Scripts whose text is unreadable without an OpenType shaper (joining, reordering, marks).
COMPLEX_SCRIPTS = frozenset({"arabic", "hebrew", "thai", "devanagari"})
_CJK = frozenset({"han", "kana", "hangul", "cjk"})


class MissingGlyphError(MaptabError):
    """No installed font has a glyph for a character of a label."""


@dataclass(frozen=True, slots=True)
class FontFace:
    """One face of a font file (``index`` selects the face inside a ``.ttc`` collection)."""

    path: str
    index: int = 0

    @property
    def family(self) -> str:
        """The face's family name (used by the SVG writer)."""
        return _face_family(self.path, self.index)


def char_script(ch: str) -> str:
    """The script of one character: a key of the block table, else ``"latin"``/``"common"``."""
    cp = ord(ch)
    for lo, hi, script in _SCRIPT_RANGES:
        if lo <= cp <= hi:
            return script
    return "latin" if ch.isalpha() else "common"


def primary_script(text: str, lang: str | None = None) -> str:
    """The key of :data:`SCRIPT_FONTS` that decides the label's main face.

    The first character outside Latin/common picks it; CJK text becomes ``ja`` if it holds
    kana, ``ko`` if it holds Hangul, else the language hint (``zh``, ``zh-tw``, ``ja``, ``ko``)
    or ``zh``.
    """
    scripts = [char_script(c) for c in text]
    if any(s in _CJK for s in scripts):
        if "kana" in scripts:
            return "ja"
        if "hangul" in scripts:
            return "ko"
        hint = (lang or "").lower()
        for key in ("zh-tw", "ja", "ko"):
            if hint.startswith(key):
                return key
        return "zh"
    for s in scripts:
        if s not in ("latin", "common"):
            return s
    return "latin"


def is_rtl(text: str) -> bool:
    """True when the first strongly directional character is Arabic or Hebrew."""
    for c in text:
        s = char_script(c)
        if s in RTL_SCRIPTS:
            return True
        if s not in ("common",):
            return False
    return False


def needs_shaping(text: str) -> bool:
    """True when the text holds a script that needs an OpenType shaper."""
    return any(char_script(c) in COMPLEX_SCRIPTS for c in text)


def package_font_dirs() -> list[Path]:
    """Folders of the installed :data:`FONT_PACKAGES` (a missing package is skipped)."""
    out = []
    for name in FONT_PACKAGES:
        spec = importlib.util.find_spec(name)
        for loc in (spec.submodule_search_locations or []) if spec else []:
            out.append(Path(loc))
    return out


def font_dirs() -> list[Path]:
    """Folders searched for fonts: the font packages, then ``MAPTAB_FONT_DIRS`` when it is set
    (even empty), else the system folders."""
    env = os.environ.get("MAPTAB_FONT_DIRS")
    system = DEFAULT_FONT_DIRS if env is None else [p for p in env.split(os.pathsep) if p]
    dirs = [*package_font_dirs(), *(Path(p) for p in system)]
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def reset_font_cache() -> None:
    """Forget every font look-up (after changing ``MAPTAB_FONT_DIRS`` in a running process)."""
    for fn in (_font_files, _resolve_spec, _fallback_for, coverage, _face_family):
        fn.cache_clear()


@lru_cache(maxsize=1)
def _font_files() -> dict[str, str]:
    """File name → first path found under :func:`font_dirs`."""
    found: dict[str, str] = {}
    for d in font_dirs():
        for p in sorted(d.rglob("*")):
            if p.suffix.lower() in (".ttf", ".otf", ".ttc"):
                found.setdefault(p.name, str(p))
    return found


@lru_cache(maxsize=64)
def _face_family(path: str, index: int) -> str:
    names = TTFont(path, fontNumber=index, lazy=True)["name"]
    return str(names.getDebugName(16) or names.getDebugName(1))  # typographic family first


@cache
def _resolve_spec(spec: str) -> FontFace | None:
    """``file`` or ``file#Family`` (a face of a collection) → the installed face, or None."""
    name, _, family = spec.partition("#")
    path = _font_files().get(name)
    if path is None:
        return None
    if not family:
        return FontFace(path)
    n_faces = len(TTCollection(path, lazy=True).fonts) if path.lower().endswith(".ttc") else 1
    for i in range(n_faces):
        if _face_family(path, i) == family:
            return FontFace(path, i)
    return None


@cache
def coverage(face: FontFace) -> frozenset[int]:
    """Code points that ``face`` maps to a glyph (its best ``cmap``)."""
    font = TTFont(face.path, fontNumber=face.index, lazy=True)
    return frozenset(font.getBestCmap() or {})


def face_for_script(script: str) -> FontFace | None:
    """The first installed preferred face for a :data:`SCRIPT_FONTS` key."""
    for spec in SCRIPT_FONTS.get(script, ()):
        face = _resolve_spec(spec)
        if face is not None:
            return face
    return None


def _fallback_faces() -> list[FontFace]:
    """Preferred faces of every script, then every other installed regular face."""
    faces: list[FontFace] = []
    for script in SCRIPT_FONTS:
        f = face_for_script(script)
        if f is not None and f not in faces:
            faces.append(f)
    for name, path in _font_files().items():
        upright = "Regular" in name or ("[" in name and "Italic" not in name)
        if upright and not name.endswith(".ttc"):
            face = FontFace(path)
            if face not in faces:
                faces.append(face)
    return faces


@lru_cache(maxsize=4096)
def _fallback_for(cp: int) -> FontFace | None:
    for face in _fallback_faces():
        if cp in coverage(face):
            return face
    return None


def _ignorable(ch: str) -> bool:
    """Whitespace and invisible format characters need no glyph."""
    return ch.isspace() or ord(ch) in (0x200C, 0x200D, 0x200E, 0x200F)


def font_runs(text: str, lang: str | None = None) -> list[tuple[str, FontFace]]:
    """Split ``text`` into maximal runs, each with a face that has all its glyphs.

    Raises :class:`MissingGlyphError` naming the character when no installed face has it.
    """
    script = primary_script(text, lang)
    primary = face_for_script(script) or face_for_script("latin")
    if primary is None:
        raise MissingGlyphError(
            "no usable font installed: reinstall maptab (its dependency manimgx-fonts "
            "carries Noto Sans) or point MAPTAB_FONT_DIRS at a folder of Noto fonts"
        )
    runs: list[tuple[str, FontFace]] = []
    for ch in text:
        face = primary
        if not _ignorable(ch) and ord(ch) not in coverage(primary):
            face = _fallback_for(ord(ch))
            if face is None:
                raise MissingGlyphError(
                    f"no installed font has a glyph for U+{ord(ch):04X} {ch!r} in label {text!r}"
                )
        if runs and (runs[-1][1] == face or _ignorable(ch)):
            runs[-1] = (runs[-1][0] + ch, runs[-1][1])
        else:
            runs.append((ch, face))
    return runs
