"""The dataset's map imager: draws each map's ``image.png`` and checks its legibility.

An instance is handed to the builders (:func:`maptab.generate.pipeline.build_benchmark`,
``--from-reasonmap``, ``--from-tables``) as their ``renderer``; it follows
:class:`maptab.io.dataset.MapImager`, so neither the dataset writer nor the generator imports
:mod:`maptab.render` (the writer receives images).
"""

from __future__ import annotations

from pathlib import Path

from maptab.core.network import Network
from maptab.render.legibility import check_legibility
from maptab.render.maps import save_map
from maptab.render.style import get_style

__all__ = ["DatasetImager"]


class DatasetImager:
    """Draws map images with :func:`~maptab.render.save_map` (style: ``meta["render_style"]``)."""

    def style_name(self, name: str | None) -> str:
        """The canonical name of map style ``name`` (``None`` → clean); unknown names raise
        :class:`~maptab.render.style.StyleError`."""
        return get_style(name).name

    def draw(self, network: Network, path: Path) -> list[str]:
        """Write ``network``'s PNG to ``path``; its legibility problems (SPEC 15)."""
        return check_legibility(save_map(network, path).placed, network)
