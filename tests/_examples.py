"""How many examples a hypothesis test runs, and the hypothesis profiles of the test tiers.

A test that sets its own count writes ``@settings(max_examples=examples(300))``: the full
suite (``make test``) runs the 300; the fast tier (``make test-fast``) sets
``MAPTAB_TEST_EXAMPLES_CAP`` (e.g. ``10``) and runs at most that many. A test without its
own count takes the loaded profile's ``max_examples`` (hypothesis's 100, or the cap).

Profiles (:func:`load_profile`, called by ``conftest.py`` before any test module is
imported, so every ``settings(...)`` object inherits from the loaded one):

* ``maptab``: no per-example deadline and no ``too_slow`` health check, so a loaded
  machine (other jobs, two xdist workers on two cores) fails no test for being slow;
* ``ci`` (``CI`` set): the same, derandomized, so a red build is a repeatable failure;
* either with ``MAPTAB_TEST_EXAMPLES_CAP`` set: ``max_examples`` capped as above.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

CAP_ENV = "MAPTAB_TEST_EXAMPLES_CAP"


def cap() -> int | None:
    """The largest number of examples a test may run (``MAPTAB_TEST_EXAMPLES_CAP``), or
    ``None`` for no cap."""
    raw = os.environ.get(CAP_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{CAP_ENV}={raw!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"{CAP_ENV}={raw!r} must be at least 1")
    return value


def examples(n: int) -> int:
    """``n``, or the cap when one is set and smaller."""
    limit = cap()
    return n if limit is None else min(n, limit)


def load_profile() -> str:
    """Register the profiles and load the one for this environment; its name."""
    common = {
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow],
    }
    limit = cap()
    if limit is not None:
        common["max_examples"] = min(settings.default.max_examples, limit)
    settings.register_profile("maptab", **common)
    settings.register_profile("ci", derandomize=True, print_blob=True, **common)
    name = "ci" if os.environ.get("CI") else "maptab"
    settings.load_profile(name)
    return name
