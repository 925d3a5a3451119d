"""One rounding rule and one cache policy: checked against brute force."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from maptab._cache import IdentityCache, KeyedCache
from maptab.core.rounding import half_up, round_half_up


def _by_hand(text: str, digits: int) -> Fraction:
    """Half-up rounding of a decimal string with integer arithmetic only."""
    exact = Fraction(text)
    scale = 10**digits
    scaled = exact * scale
    sign = -1 if scaled < 0 else 1
    whole, rest = divmod(abs(scaled), 1)
    whole = int(whole) + (1 if rest >= Fraction(1, 2) else 0)
    return Fraction(sign * whole, scale)


@given(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9),
    st.integers(0, 6),
)
def test_round_half_up_matches_integer_rounding_of_the_decimal_spelling(x, digits):
    assert Fraction(str(half_up(x, digits))) == _by_hand(repr(x), digits)
    assert round_half_up(x, digits) == float(_by_hand(repr(x), digits))


@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**6))
def test_fractions_round_like_exact_arithmetic(q):
    # 28 significant digits are far finer than any such fraction's distance to a half-cent
    exact = abs(q) * 100
    whole, rest = divmod(exact, 1)
    rounded = Fraction(int(whole) + (rest >= Fraction(1, 2)), 100) * (-1 if q < 0 else 1)
    assert Fraction(str(half_up(q, 2))) == rounded


def test_the_classic_cases():
    assert round_half_up(2.675, 2) == 2.68  # round() gives 2.67
    assert round_half_up(0.745, 2) == 0.75
    assert round_half_up(-0.745, 2) == -0.75
    assert round_half_up(1e40, 2) == 1e40  # too large to carry cents: unchanged


@given(st.lists(st.integers(0, 20), max_size=200), st.integers(1, 6))
def test_keyed_cache_is_a_bounded_lru(keys, size):
    cache: KeyedCache[int, int] = KeyedCache(size)
    order: list[int] = []  # brute-force model: least recent first
    for k in keys:
        built = []
        assert cache.get(k, lambda k=k, built=built: built.append(k) or k * k) == k * k
        assert bool(built) == (k not in order)
        if k in order:
            order.remove(k)
        order.append(k)
        del order[:-size]
        assert len(cache) == len(order) <= size


def test_identity_cache_keys_on_the_object_not_its_value():
    cache: IdentityCache[list[int], int] = IdentityCache(4)
    a, b = [1, 2], [1, 2]
    calls = []
    assert cache.get(a, lambda: calls.append("a") or 1) == 1
    assert cache.get(b, lambda: calls.append("b") or 2) == 2  # equal but not the same
    assert cache.get(a, lambda: calls.append("a2") or 3) == 1
    assert cache.get(a, lambda: calls.append("x") or 4, "extra") == 4
    assert calls == ["a", "b", "x"]


def test_the_qa_type_count_is_the_length_of_the_table():
    from maptab.core.qa_types import QA_TYPES
    from maptab.core.schema import QA_TYPE_COUNT

    assert len(QA_TYPES) == QA_TYPE_COUNT
    assert sorted(t.number for t in QA_TYPES) == list(range(1, QA_TYPE_COUNT + 1))


def test_every_exception_class_derives_from_maptab_error():
    """Every exception defined in src/maptab subclasses MaptabError (one root)."""
    import importlib
    import pkgutil

    import maptab
    from maptab.errors import MaptabError

    found = []
    for info in pkgutil.walk_packages(maptab.__path__, "maptab."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found.append(value)
    assert found, "no exception classes found"
    stray = [f"{c.__module__}.{c.__qualname__}" for c in found if not issubclass(c, MaptabError)]
    assert stray == []


def test_the_builder_reports_progress_through_the_hook_and_draws_through_the_renderer(tmp_path):
    """Progress and images are injected: the builder calls what it is given."""
    from pathlib import Path

    from maptab.generate.pipeline import Preset, build_benchmark
    from maptab.io.dataset import Dataset

    calls: list[tuple[str, int | None, int]] = []

    def progress(items, label, total=None):
        seen = 0
        for item in items:
            seen += 1
            yield item
        calls.append((label, total, seen))

    class Imager:
        drawn: list[str] = []

        def style_name(self, name):
            return name.upper()

        def draw(self, network, path: Path) -> list[str]:
            path.write_bytes(b"png of " + network.map_id.encode())
            self.drawn.append(network.map_id)
            return ["a problem"] if network.map_id == "metro-000" else []

    tiny = Preset("tiny", 1, 1, 4, 4, q_min=2, sizes=("small",))
    imager = Imager()
    manifest = build_benchmark(
        tmp_path / "ds", preset=tiny, seed=3, renderer=imager, progress=progress
    )
    assert calls == [("maps", 2, 2)]
    assert imager.drawn == ["metro-000", "travel-000"]
    assert manifest["options"]["map_style"] == "CLEAN"
    assert manifest["options"]["legibility_problems"] == {"metro-000": ["a problem"]}
    ds = Dataset(tmp_path / "ds")
    assert ds.image_path("travel-000").read_bytes() == b"png of travel-000"
    plain = build_benchmark(tmp_path / "plain", preset=tiny, seed=3)
    assert plain["options"]["render"] is False
    assert Dataset(tmp_path / "plain").image_path("travel-000") is None
