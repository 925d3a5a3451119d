"""Test configuration: the hypothesis profile (``_examples.load_profile``). On CI (``CI``
set) hypothesis runs derandomized, so a run is reproducible and a red build always means a
real, repeatable failure; locally it explores new examples each run. ``make test-fast``
caps every test's examples through ``MAPTAB_TEST_EXAMPLES_CAP``."""

from __future__ import annotations

from _examples import load_profile

load_profile()
