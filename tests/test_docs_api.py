"""The examples of ``docs/reference/api.md`` run as written (doctest), in an empty folder."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from maptab.tasks import base as task_registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "reference" / "api.md"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_docs_api_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    task_registry.all_kinds()  # load the built-in kinds before the doc registers its own
    before = dict(task_registry._REGISTRY)
    try:
        result = doctest.testfile(
            str(DOC),
            module_relative=False,
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
            raise_on_error=False,
            verbose=False,
        )
    finally:  # the doc's toy kind must not leak into other tests
        task_registry._REGISTRY.clear()
        task_registry._REGISTRY.update(before)
    assert result.attempted >= 30
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {DOC} failed"
