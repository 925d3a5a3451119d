"""Small seeded networks with geometry, for the renderer's tests and benchmark (test-only).

These are *not* the benchmark builder's synthetic networks (that is :mod:`maptab.generate`);
they only exercise the renderer: lines that wander on an octilinear grid, cross, share
track and loop, with station names in one of ten languages.
"""

from __future__ import annotations

import itertools
import math
import random

from maptab.core.network import Network

LANGS = ("en", "zh", "ja", "ko", "fr", "de", "es", "ru", "ar", "th")

_NAME_PARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    # language: (first parts, second parts, joiner)
    "en": (
        (
            "North",
            "South",
            "East",
            "West",
            "Old",
            "New",
            "King",
            "Queen",
            "Park",
            "River",
            "Lake",
            "Hill",
            "Mill",
            "Bridge",
            "Market",
            "Harbor",
            "Garden",
            "Castle",
            "Church",
            "Union",
        ),
        (
            "Street",
            "Square",
            "Park",
            "Road",
            "Gate",
            "Cross",
            "Lane",
            "Avenue",
            "Yard",
            "Green",
            "Heights",
            "Terminal",
            "Center",
            "Plaza",
            "Wharf",
            "Common",
            "Field",
            "Row",
            "Way",
            "Point",
        ),
        " ",
    ),
    "zh": (
        (
            "东",
            "西",
            "南",
            "北",
            "中",
            "新",
            "长",
            "金",
            "龙",
            "凤",
            "华",
            "安",
            "和",
            "平",
            "光",
            "明",
            "天",
            "山",
            "湖",
            "海",
            "白",
            "青",
        ),
        (
            "门",
            "桥",
            "园",
            "湾",
            "城",
            "街",
            "路口",
            "坡",
            "村",
            "庄",
            "塘",
            "林",
            "江",
            "泉",
            "府",
            "台",
            "岗",
            "坊",
            "寺",
            "广场",
        ),
        "",
    ),
    "ja": (
        (
            "東",
            "西",
            "新",
            "中",
            "大",
            "上",
            "下",
            "本",
            "北",
            "南",
            "青",
            "若",
            "桜",
            "松",
            "緑",
            "高",
            "小",
            "石",
            "富士",
            "白",
        ),
        (
            "宿",
            "橋",
            "町",
            "谷",
            "田",
            "川",
            "原",
            "島",
            "台",
            "山",
            "野",
            "坂",
            "ヶ丘",
            "の森",
            "浜",
            "沢",
            "通り",
            "駅前",
            "公園",
            "口",
        ),
        "",
    ),
    "ko": (
        (
            "강",
            "서",
            "동",
            "남",
            "북",
            "신",
            "중",
            "한",
            "월",
            "은",
            "청",
            "금",
            "석",
            "수",
            "용",
            "송",
            "대",
            "상",
            "하",
            "백",
        ),
        (
            "남",
            "포",
            "천",
            "산",
            "정",
            "림",
            "촌",
            "원",
            "곡",
            "문",
            "대",
            "교",
            "동",
            "리",
            "역",
            "사",
            "성",
            "호",
            "평",
            "진",
        ),
        "",
    ),
    "fr": (
        (
            "Place",
            "Porte",
            "Pont",
            "Rue",
            "Gare",
            "Parc",
            "Quai",
            "Cité",
            "Jardin",
            "Avenue",
            "Square",
            "Cours",
            "Boulevard",
            "Château",
            "Fontaine",
            "Marché",
            "Halle",
            "Cloître",
            "Clos",
            "Mont",
        ),
        (
            "d'Italie",
            "Saint-Michel",
            "des Lilas",
            "de l'Étoile",
            "Royale",
            "du Nord",
            "de Lyon",
            "Bellevue",
            "des Ternes",
            "Châtelet",
            "de l'Église",
            "Mérode",
            "des Fêtes",
            "Garçon",
            "d'Août",
            "Pâquerette",
            "Noël",
            "Voltaire",
            "Molière",
            "Ça-Ira",
        ),
        " ",
    ),
    "de": (
        (
            "Haupt",
            "Nord",
            "Süd",
            "Ost",
            "West",
            "Alt",
            "Neu",
            "Markt",
            "Schloss",
            "Brücken",
            "Grün",
            "Wald",
            "Berg",
            "Kirch",
            "Mühlen",
            "Rosen",
            "Linden",
            "Hafen",
            "Stern",
            "Tor",
        ),
        (
            "platz",
            "straße",
            "tor",
            "brücke",
            "bahnhof",
            "allee",
            "garten",
            "ufer",
            "hof",
            "weg",
            "höhe",
            "markt",
            "feld",
            "au",
            "grund",
            "eck",
            "bühl",
            "stadt",
            "ring",
            "dorf",
        ),
        "",
    ),
    "es": (
        (
            "Plaza",
            "Puerta",
            "Avenida",
            "Calle",
            "Parque",
            "Estación",
            "Paseo",
            "Glorieta",
            "Ronda",
            "Puente",
            "Barrio",
            "Mercado",
            "Jardín",
            "Camino",
            "Cuesta",
            "Fuente",
            "Alameda",
            "Torre",
            "Vía",
            "Villa",
        ),
        (
            "de España",
            "del Sol",
            "Mayor",
            "de Toledo",
            "Norte",
            "de Atocha",
            "Real",
            "del Río",
            "de la Luz",
            "San Martín",
            "Colón",
            "Ópera",
            "Niño Jesús",
            "Peñalara",
            "Núñez",
            "Cañada",
            "Begoña",
            "Sur",
            "Oeste",
            "Güell",
        ),
        " ",
    ),
    "ru": (
        (
            "Красная",
            "Новая",
            "Старая",
            "Северная",
            "Южная",
            "Речная",
            "Садовая",
            "Лесная",
            "Горная",
            "Тихая",
            "Белая",
            "Зелёная",
            "Светлая",
            "Дальняя",
            "Ближняя",
            "Вишнёвая",
            "Липовая",
            "Соборная",
            "Морская",
            "Мирная",
        ),
        (
            "площадь",
            "улица",
            "застава",
            "роща",
            "слобода",
            "набережная",
            "горка",
            "долина",
            "поляна",
            "пристань",
            "аллея",
            "линия",
            "заря",
            "дорога",
            "слава",
            "гавань",
            "стрелка",
            "пустошь",
            "сторона",
            "заводь",
        ),
        " ",
    ),
    "ar": (
        (
            "باب",
            "سوق",
            "حي",
            "شارع",
            "ميدان",
            "جسر",
            "برج",
            "وادي",
            "قصر",
            "حديقة",
            "محطة",
            "دوار",
            "بوابة",
            "ساحة",
            "مدينة",
            "قرية",
            "مرفأ",
            "جامع",
            "نبع",
            "تل",
        ),
        (
            "النور",
            "السلام",
            "الملك",
            "البحر",
            "الجامعة",
            "المدينة",
            "النخيل",
            "الشمس",
            "القمر",
            "الربيع",
            "الزهور",
            "الأمل",
            "الفجر",
            "الشرق",
            "الغرب",
            "الوادي",
            "الرمال",
            "الياسمين",
            "الحرية",
            "الواحة",
        ),
        " ",
    ),
    "th": (
        (
            "สวน",
            "บาง",
            "ท่า",
            "หัว",
            "วัด",
            "สะพาน",
            "ตลาด",
            "คลอง",
            "บ้าน",
            "ดอน",
            "หนอง",
            "ทุ่ง",
            "เขา",
            "ลาด",
            "บึง",
            "ศาลา",
            "ประตู",
            "โรง",
            "ป่า",
            "เกาะ",
        ),
        (
            "ลำพู",
            "กะปิ",
            "พระ",
            "ขาว",
            "ใหม่",
            "หลวง",
            "ทอง",
            "เงิน",
            "น้ำ",
            "ไม้",
            "ช้าง",
            "แก้ว",
            "ชัย",
            "สุข",
            "ศรี",
            "ร่มเกล้า",
            "ทิพย์",
            "เหนือ",
            "ใต้",
            "กลาง",
        ),
        "",
    ),
}

_LINE_NAMES = {
    "en": "Line {}",
    "zh": "{}号线",
    "ja": "{}号線",
    "ko": "{}호선",
    "fr": "Ligne {}",
    "de": "Linie {}",
    "es": "Línea {}",
    "ru": "Линия {}",
    "ar": "الخط {}",
    "th": "สาย {}",
}

_DIRS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))


def sample_names(lang: str, rng: random.Random):
    """An endless iterator of distinct place names in ``lang`` (seeded order)."""
    if lang not in _NAME_PARTS:
        raise ValueError(f"unknown sample language {lang!r}; expected one of {LANGS}")
    first, second, joiner = _NAME_PARTS[lang]
    combos = [f"{a}{joiner}{b}" for a, b in itertools.product(first, second) if a != b]
    rng.shuffle(combos)
    yield from combos
    for n in itertools.count(2):
        for c in combos:
            yield f"{c} {n}"


def sample_metro(n_stations: int = 40, *, lang: str = "en", seed: int = 0) -> Network:
    """A metromap of about ``n_stations`` stations on a grid (``positions`` set).

    Lines are self-avoiding random walks with 45° turns; lines meeting at a grid point share a
    transfer station, and lines walking the same grid step share track. When the map has 12
    or more stations the first line is a loop (an octagon around the centre).
    """
    rng = random.Random(seed)
    names = sample_names(lang, rng)
    side = max(5, round(math.sqrt(n_stations) * 1.35))
    point_name: dict[tuple[int, int], str] = {}

    def name(p: tuple[int, int]) -> str:
        if p not in point_name:
            point_name[p] = next(names)
        return point_name[p]

    lines: dict[str, list[str]] = {}
    line_label = _LINE_NAMES[lang]
    if n_stations >= 12:
        r = max(2, side // 4)
        c = side // 2
        corners = [
            (c - r // 2, c - r),
            (c + r // 2, c - r),
            (c + r, c - r // 2),
            (c + r, c + r // 2),
            (c + r // 2, c + r),
            (c - r // 2, c + r),
            (c - r, c + r // 2),
            (c - r, c - r // 2),
        ]
        ring: list[tuple[int, int]] = []
        for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
            steps = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
            for i in range(steps):
                ring.append((a[0] + (b[0] - a[0]) * i // steps, a[1] + (b[1] - a[1]) * i // steps))
        lines[line_label.format(1)] = [name(p) for p in [*ring, ring[0]]]
    attempts = 0
    while len(point_name) < n_stations and attempts < 500:
        attempts += 1
        path = _walk(rng, side)
        if len(path) >= 4:
            lines[line_label.format(len(lines) + 1)] = [name(p) for p in path]
    net = Network.from_lines(lines, map_id=f"sample-metro-{lang}-{n_stations}")
    inv = {n: p for p, n in point_name.items()}
    net.positions = {net.resolve(n) or n: (float(p[0]), float(p[1])) for n, p in inv.items()}
    net.meta["language"] = lang
    return net


def _walk(rng: random.Random, side: int) -> list[tuple[int, int]]:
    edge = rng.randrange(4)
    t = rng.randrange(side)
    start = [(t, 0), (side - 1, t), (t, side - 1), (0, t)][edge]
    di = [2, 4, 6, 0][edge] + rng.choice((-1, 0, 0, 1))
    di %= 8
    path, seen = [start], {start}
    length = rng.randint(int(side * 0.7), int(side * 1.3))
    while len(path) < length:
        options = [di] * 4 + [(di + 1) % 8, (di - 1) % 8]
        rng.shuffle(options)
        for d in options:
            nxt = (path[-1][0] + _DIRS[d][0], path[-1][1] + _DIRS[d][1])
            if 0 <= nxt[0] < side and 0 <= nxt[1] < side and nxt not in seen:
                di = d
                break
        else:
            break
        path.append(nxt)
        seen.add(nxt)
    return path


def sample_scenic(n_spots: int = 15, *, lang: str = "en", seed: int = 0) -> Network:
    """A travelmap: spots scattered with a minimum spacing, joined by a spanning tree plus a
    few short extra paths; ``meta["modes"]`` marks each path walk or drive and
    ``meta["annotations"]`` gives about half of them a time or distance."""
    rng = random.Random(seed)
    names = sample_names(lang, rng)
    side = math.sqrt(n_spots) * 2.2
    pts: list[tuple[float, float]] = []
    while len(pts) < n_spots:
        p = (rng.uniform(0, side), rng.uniform(0, side * 0.75))
        if all(math.dist(p, q) > 1.3 for q in pts):
            pts.append(p)
    spot = [next(names) for _ in pts]
    pairs = _spanning_tree(pts)
    extra = sorted(
        (math.dist(pts[i], pts[j]), i, j)
        for i in range(len(pts))
        for j in range(i + 1, len(pts))
        if (i, j) not in pairs
    )
    pairs += [(i, j) for _, i, j in extra[: max(1, n_spots // 3)]]
    net = Network.from_edges(
        [(spot[i], spot[j]) for i, j in pairs],
        map_id=f"sample-scenic-{lang}-{n_spots}",
        positions={spot[i]: pts[i] for i in range(len(pts))},
    )
    modes, notes = {}, {}
    for e, (i, j) in zip(net.edges, pairs, strict=True):
        d = math.dist(pts[i], pts[j])
        modes[e.name] = "walk" if d < 2.2 and rng.random() < 0.7 else "drive"
        if rng.random() < 0.5:
            kind = rng.choice(("time", "distance"))
            speed = 5.0 if modes[e.name] == "walk" else 30.0
            value = round(d * 0.8 / speed * 60) if kind == "time" else round(d * 0.8, 1)
            notes[e.name] = {"kind": kind, "value": value}
    net.meta.update(modes=modes, annotations=notes, language=lang)
    return net


def _spanning_tree(pts: list[tuple[float, float]]) -> list[tuple[int, int]]:
    """Euclidean minimum spanning tree (Prim, O(n²))."""
    n = len(pts)
    best = {j: (math.dist(pts[0], pts[j]), 0) for j in range(1, n)}
    out = []
    while best:
        j = min(best, key=lambda k: best[k][0])
        _, i = best.pop(j)
        out.append((min(i, j), max(i, j)))
        for k in best:
            d = math.dist(pts[j], pts[k])
            if d < best[k][0]:
                best[k] = (d, j)
    return out
