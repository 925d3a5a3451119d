"""Multilingual names for synthetic maps: stations, scenic spots, transport hubs, lines.

Place names come from the `faker <https://faker.readthedocs.io>`_ address and person
providers of each language's locale (street, city, town, district, tambon … parts), never
from hand-made word lists. Only the generic words a map needs around a number or a place
(``Line 3`` / ``3号线``, ``… Airport`` / ``…机场``) are templates here.

Every function takes a :class:`numpy.random.Generator`, draws one integer from it and seeds
a faker instance with it, so the same generator state gives the same names (for a given
faker version, which the dataset manifest records). Names returned by one call are unique
*as table keys*: after :func:`maptab.core.network.table_name` (``-`` → ``_``, trimmed) and
case-folding, so two names can never collide in a MapTab table or under case-insensitive
matching. Candidates with characters that would break a table or a route string
(``, ; ( ) < >`` and line breaks) or that are too wide for a map label are skipped.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import cache

import numpy as np
from faker import Faker

from maptab.core.network import table_name
from maptab.errors import MaptabError

#: Supported map languages: code -> faker locale.
LANGUAGES: dict[str, str] = {
    "en": "en_US",
    "zh": "zh_CN",
    "ja": "ja_JP",
    "ko": "ko_KR",
    "fr": "fr_FR",
    "de": "de_DE",
    "es": "es_ES",
    "ru": "ru_RU",
    "ar": "ar_SA",
    "th": "th_TH",
    "it": "it_IT",
    "pt": "pt_PT",
    "nl": "nl_NL",
    "pl": "pl_PL",
    "cs": "cs_CZ",
    "hu": "hu_HU",
    "id": "id_ID",
    "el": "el_GR",
    "uk": "uk_UA",
    "he": "he_IL",
    "fa": "fa_IR",
    "hi": "hi_IN",
    "bn": "bn_BD",
    "ka": "ka_GE",
    "hy": "hy_AM",
    "zh-tw": "zh_TW",
}

# A recipe is a tuple of faker provider methods whose outputs are joined by the language's
# separator. ``primary`` recipes are drawn with the given weights; once they stop giving new
# names (small pools, e.g. Japanese towns), the two-part ``fallback`` recipe takes over.
_Recipes = tuple[tuple[tuple[str, ...], float], ...]

_STATION: dict[str, _Recipes] = {
    "en": ((("street_name",), 0.5), (("city",), 0.3), (("last_name",), 0.2)),
    "zh": ((("street_name",), 0.5), (("district",), 0.2), (("city_name",), 0.1), (("city",), 0.2)),
    "ja": ((("town",), 0.6), (("city",), 0.3), (("last_name",), 0.1)),
    "ko": ((("street_name",), 0.3), (("borough",), 0.2), (("city",), 0.2), (("town",), 0.3)),
    "fr": ((("street_name",), 0.6), (("city",), 0.3), (("last_name",), 0.1)),
    "de": ((("street_name",), 0.6), (("city",), 0.4)),
    "es": ((("street_name",), 0.6), (("city",), 0.1), (("last_name",), 0.3)),
    "ru": ((("street_title",), 0.4), (("city_name",), 0.3), (("street_name",), 0.3)),
    "ar": ((("last_name",), 0.3), (("first_name",), 0.7)),
    "th": ((("tambon",), 0.4), (("street_name",), 0.4), (("amphoe",), 0.1), (("city_name",), 0.1)),
    "it": ((("street_name",), 0.5), (("city",), 0.3), (("last_name",), 0.2)),
    "pt": ((("street_name",), 0.5), (("city_name",), 0.3), (("last_name",), 0.2)),
    "nl": ((("street_name",), 0.6), (("city",), 0.4)),
    "pl": ((("street_name",), 0.5), (("city",), 0.3), (("last_name",), 0.2)),
    "cs": ((("street_name",), 0.5), (("city_name",), 0.5)),
    "hu": ((("street_name",), 0.5), (("city",), 0.3), (("last_name",), 0.2)),
    "id": ((("street_name",), 0.6), (("city_name",), 0.4)),
    "el": ((("street_name",), 0.6), (("city",), 0.2), (("last_name",), 0.2)),
    "uk": ((("street_title",), 0.4), (("city_name",), 0.3), (("street_name",), 0.3)),
    "he": ((("street_title",), 0.5), (("city_name",), 0.3), (("street_name",), 0.2)),
    "fa": ((("street_name",), 0.5), (("city",), 0.3), (("last_name",), 0.2)),
    "hi": ((("street_name",), 0.4), (("city_name",), 0.3), (("last_name",), 0.3)),
    "bn": ((("street_name",), 0.5), (("city_name",), 0.3), (("last_name",), 0.2)),
    "ka": ((("street_title",), 0.5), (("city_name",), 0.3), (("last_name",), 0.2)),
    "hy": ((("street_name",), 0.6), (("last_name",), 0.2), (("city",), 0.2)),
    "zh-tw": ((("street_name",), 0.4), (("city_name",), 0.3), (("city",), 0.3)),
}
_SPOT: dict[str, _Recipes] = {
    "en": ((("city",), 0.6), (("street_name",), 0.4)),
    "zh": ((("district",), 0.3), (("city_name",), 0.2), (("street_name",), 0.5)),
    "ja": ((("town",), 0.8), (("city",), 0.2)),
    "ko": ((("street_name",), 0.3), (("town",), 0.5), (("borough",), 0.2)),
    "fr": ((("city",), 0.6), (("street_name",), 0.4)),
    "de": ((("city",), 0.5), (("street_name",), 0.5)),
    "es": ((("street_name",), 0.5), (("city",), 0.2), (("last_name",), 0.3)),
    "ru": ((("city_name",), 0.6), (("street_title",), 0.4)),
    "ar": ((("last_name",), 0.4), (("first_name",), 0.6)),
    "th": ((("tambon",), 0.6), (("amphoe",), 0.2), (("city_name",), 0.2)),
    "it": ((("city",), 0.6), (("street_name",), 0.4)),
    "pt": ((("city",), 0.6), (("street_name",), 0.4)),
    "nl": ((("city",), 0.5), (("street_name",), 0.5)),
    "pl": ((("city",), 0.6), (("street_name",), 0.4)),
    "cs": ((("city_name",), 0.6), (("street_name",), 0.4)),
    "hu": ((("city",), 0.6), (("street_name",), 0.4)),
    "id": ((("city_name",), 0.5), (("street_name",), 0.5)),
    "el": ((("street_name",), 0.5), (("city",), 0.5)),
    "uk": ((("city_name",), 0.6), (("street_title",), 0.4)),
    "he": ((("city_name",), 0.6), (("street_title",), 0.4)),
    "fa": ((("city",), 0.6), (("street_name",), 0.4)),
    "hi": ((("city_name",), 0.6), (("street_name",), 0.4)),
    "bn": ((("city_name",), 0.6), (("street_name",), 0.4)),
    "ka": ((("city_name",), 0.6), (("street_title",), 0.4)),
    "hy": ((("city",), 0.6), (("street_name",), 0.4)),
    "zh-tw": ((("city_name",), 0.5), (("street_name",), 0.5)),
}
_FALLBACK: dict[str, tuple[str, ...]] = {
    "en": ("last_name", "street_suffix"),
    "zh": ("city_name", "street_name"),
    "ja": ("town", "chome"),
    "ko": ("borough", "town"),
    "fr": ("street_name", "last_name"),
    "de": ("city", "street_name"),
    "es": ("street_name", "last_name"),
    "ru": ("city_name", "street_title"),
    "ar": ("first_name", "last_name"),
    "th": ("tambon", "amphoe"),
    "it": ("street_name", "last_name"),
    "pt": ("street_name", "last_name"),
    "nl": ("city", "street_name"),
    "pl": ("city", "street_name"),
    "cs": ("city_name", "street_name"),
    "hu": ("city", "last_name"),
    "id": ("street_name", "last_name"),
    "el": ("street_name", "last_name"),
    "uk": ("city_name", "street_name"),
    "he": ("city_name", "street_title"),
    "fa": ("city", "last_name"),
    "hi": ("city_name", "last_name"),
    "bn": ("city_name", "street_name"),
    "ka": ("city_name", "street_title"),
    "hy": ("street_name", "last_name"),
    "zh-tw": ("city_name", "street_name"),
}
_SEPARATOR = {"zh": "", "zh-tw": "", "ja": "", "ko": " ", "th": ""}

#: The provider method naming a town or city, used inside hub names.
_PLACE = {
    "en": "city",
    "zh": "city_name",
    "ja": "town",
    "ko": "street_name",
    "fr": "city",
    "de": "city",
    "es": "city",
    "ru": "city_name",
    "ar": "last_name",
    "th": "city_name",
    "it": "city",
    "pt": "city_name",
    "nl": "city",
    "pl": "city",
    "cs": "city_name",
    "hu": "city",
    "id": "city_name",
    "el": "city",
    "uk": "city_name",
    "he": "city_name",
    "fa": "city",
    "hi": "city_name",
    "bn": "city_name",
    "ka": "city_name",
    "hy": "city",
    "zh-tw": "city_name",
}

_LINE_TEMPLATE = {
    "en": "Line {n}",
    "zh": "{n}号线",
    "ja": "{n}号線",
    "ko": "{n}호선",
    "fr": "Ligne {n}",
    "de": "Linie {n}",
    "es": "Línea {n}",
    "ru": "Линия {n}",
    "ar": "الخط {n}",
    "th": "สาย {n}",
    "it": "Linea {n}",
    "pt": "Linha {n}",
    "nl": "Lijn {n}",
    "pl": "Linia {n}",
    "cs": "Linka {n}",
    "hu": "{n}. vonal",
    "id": "Jalur {n}",
    "el": "Γραμμή {n}",
    "uk": "Лінія {n}",
    "he": "קו {n}",
    "fa": "خط {n}",
    "hi": "लाइन {n}",
    "bn": "লাইন {n}",
    "ka": "ხაზი {n}",
    "hy": "Գիծ {n}",
    "zh-tw": "{n}號線",
}

#: Hub names per kind (SPEC 6 transport hubs): ``{place}`` is a faker place name.
_HUB_TEMPLATE: dict[str, dict[str, str]] = {
    "airport": {
        "en": "{place} Airport",
        "zh": "{place}机场",
        "ja": "{place}空港",
        "ko": "{place}공항",
        "fr": "Aéroport de {place}",
        "de": "Flughafen {place}",
        "es": "Aeropuerto de {place}",
        "ru": "Аэропорт {place}",
        "ar": "مطار {place}",
        "th": "ท่าอากาศยาน{place}",
        "it": "Aeroporto di {place}",
        "pt": "Aeroporto de {place}",
        "nl": "Luchthaven {place}",
        "pl": "Lotnisko {place}",
        "cs": "Letiště {place}",
        "hu": "{place} repülőtér",
        "id": "Bandara {place}",
        "el": "Αεροδρόμιο {place}",
        "uk": "Аеропорт {place}",
        "he": "נמל התעופה {place}",
        "fa": "فرودگاه {place}",
        "hi": "{place} हवाई अड्डा",
        "bn": "{place} বিমানবন্দর",
        "ka": "{place} აეროპორტი",
        "hy": "{place} օդանավակայան",
        "zh-tw": "{place}機場",
    },
    "station": {
        "en": "{place} Station",
        "zh": "{place}站",
        "ja": "{place}駅",
        "ko": "{place}역",
        "fr": "Gare de {place}",
        "de": "Bahnhof {place}",
        "es": "Estación de {place}",
        "ru": "Вокзал {place}",
        "ar": "محطة {place}",
        "th": "สถานีรถไฟ{place}",
        "it": "Stazione di {place}",
        "pt": "Estação de {place}",
        "nl": "Station {place}",
        "pl": "Dworzec {place}",
        "cs": "Nádraží {place}",
        "hu": "{place} pályaudvar",
        "id": "Stasiun {place}",
        "el": "Σταθμός {place}",
        "uk": "Вокзал {place}",
        "he": "תחנת {place}",
        "fa": "ایستگاه {place}",
        "hi": "{place} रेलवे स्टेशन",
        "bn": "{place} রেলওয়ে স্টেশন",
        "ka": "{place} სადგური",
        "hy": "{place} կայարան",
        "zh-tw": "{place}站",
    },
}
HUB_KINDS: tuple[str, ...] = tuple(_HUB_TEMPLATE)

_FORBIDDEN = set(',;()<>[]\n\r\t"')
_MAX_WIDTH = 24  # display columns; East Asian wide characters count two
_PRIMARY_MISSES = 40  # consecutive duplicate draws before switching to the fallback recipe
_TOTAL_MISSES = 5000


class NamesError(MaptabError):
    """Names could not be produced (unknown language, or the name pool ran dry)."""


def _check_language(language: str) -> str:
    if language not in LANGUAGES:
        raise NamesError(f"unknown language {language!r}; expected one of {sorted(LANGUAGES)}")
    return language


#: Word lists that Faker builds from a set, so that their order (and every name drawn from
#: them) follows the per-process string hash seed: it_IT's ``cities`` is ``list({...})``.
#: They are sorted once per process so that a seed gives the same names everywhere.
_SET_BUILT_LISTS: dict[str, tuple[str, ...]] = {"it_IT": ("cities",)}


@cache
def _faker(locale: str) -> Faker:
    fake = Faker(locale)
    for attr in _SET_BUILT_LISTS.get(locale, ()):
        for provider in fake.providers:
            words = getattr(provider, attr, None)
            if isinstance(words, list):
                setattr(provider, attr, sorted(words))
    return fake


def _seeded(language: str, rng: np.random.Generator) -> Faker:
    fake = _faker(LANGUAGES[_check_language(language)])
    fake.seed_instance(int(rng.integers(2**32)))
    return fake


def name_key(name: str) -> str:
    """The identity two names must not share within a map: table key, case-folded."""
    return table_name(name).casefold()


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _acceptable(name: str) -> bool:
    return bool(name) and not (_FORBIDDEN & set(name)) and _width(name) <= _MAX_WIDTH


def _clean(text: str) -> str:
    text = " ".join(text.split())
    first = text[:1].upper()
    if "\u1c90" <= first <= "\u1cbf":  # Georgian has no capitals in running text
        first = text[:1]
    return first + text[1:]


def _unique(
    n: int, draw: Callable[[bool], str], taken: Iterable[str] = (), what: str = "names"
) -> list[str]:
    """``n`` new acceptable names from ``draw(fallback)``, unique by :func:`name_key`."""
    seen = {name_key(t) for t in taken}
    out: list[str] = []
    misses, run, fallback = 0, 0, False
    while len(out) < n:
        name = _clean(draw(fallback))
        key = name_key(name)
        if _acceptable(name) and key not in seen:
            seen.add(key)
            out.append(name)
            run = 0
            continue
        misses += 1
        run += 1
        if run >= _PRIMARY_MISSES:
            fallback = True
        if misses > _TOTAL_MISSES:
            raise NamesError(f"could not draw {n} distinct {what}; got {len(out)}")
    return out


def _recipe_drawer(fake: Faker, language: str, recipes: _Recipes) -> Callable[[bool], str]:
    sep = _SEPARATOR.get(language, " ")
    methods = [r for r, _ in recipes]
    weights = np.array([w for _, w in recipes], dtype=float)
    cum = np.cumsum(weights / weights.sum())

    def draw(fallback: bool) -> str:
        if fallback:
            parts: Sequence[str] = _FALLBACK[language]
        else:
            parts = methods[int(np.searchsorted(cum, fake.random.random(), side="right"))]
        return sep.join(str(getattr(fake, m)()) for m in parts)

    return draw


def station_names(
    n: int, language: str, rng: np.random.Generator, taken: Iterable[str] = ()
) -> list[str]:
    """``n`` distinct metro station names in ``language`` (none colliding with ``taken``)."""
    fake = _seeded(language, rng)
    return _unique(n, _recipe_drawer(fake, language, _STATION[language]), taken, "stations")


def spot_names(
    n: int, language: str, rng: np.random.Generator, taken: Iterable[str] = ()
) -> list[str]:
    """``n`` distinct scenic-spot names in ``language`` (none colliding with ``taken``)."""
    fake = _seeded(language, rng)
    return _unique(n, _recipe_drawer(fake, language, _SPOT[language]), taken, "spots")


def hub_names(
    kinds: Sequence[str], language: str, rng: np.random.Generator, taken: Iterable[str] = ()
) -> list[str]:
    """One transport-hub name per entry of ``kinds`` (``"airport"`` / ``"station"``)."""
    fake = _seeded(language, rng)
    out: list[str] = []
    for kind in kinds:
        if kind not in _HUB_TEMPLATE:
            raise NamesError(f"unknown hub kind {kind!r}; expected one of {HUB_KINDS}")
        template = _HUB_TEMPLATE[kind][language]

        def draw(_fallback: bool, template: str = template) -> str:
            return template.format(place=getattr(fake, _PLACE[language])())

        out += _unique(1, draw, [*taken, *out], "hub names")
    return out


def line_names(n: int, language: str, rng: np.random.Generator) -> list[str]:
    """``n`` distinct line names such as ``Line 3`` / ``3号线`` / ``Ligne 3``.

    Lines are numbered 1..n; in three systems out of ten the numbering has gaps (numbers
    drawn from 1..n+3 without replacement, then sorted), as real networks often do.
    """
    template = _LINE_TEMPLATE[_check_language(language)]
    if rng.random() < 0.3:
        numbers = sorted(int(k) for k in rng.choice(np.arange(1, n + 4), size=n, replace=False))
    else:
        numbers = list(range(1, n + 1))
    return [template.format(n=k) for k in numbers]
