"""Test configuration: on CI (``CI`` set) hypothesis runs derandomized, so a run is
reproducible and a red build always means a real, repeatable failure; locally it explores
new examples each run."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
