"""Map rendering: metro and scenic maps in any script, layout, legibility, route overlay.

SPEC 15. Data flows one way: a :class:`~maptab.core.network.Network` is laid out
(:func:`layout_network`, when it has no positions), placed (:mod:`.metro`, :mod:`.scenic`:
every mark, stroke and label as a :class:`PlacedGeometry`), painted (:mod:`.draw`: PNG or
SVG), checked (:func:`check_legibility`) and overlaid with routes (:func:`draw_route`).
"""

from maptab.render.fonts import MissingGlyphError
from maptab.render.geometry import PlacedGeometry
from maptab.render.layout import layout_network, layout_quality
from maptab.render.legibility import check_legibility
from maptab.render.maps import RenderError, RenderResult, place_map, render_map, save_map
from maptab.render.overlay import draw_route
from maptab.render.text import TextEngineError

__all__ = [
    "MissingGlyphError",
    "PlacedGeometry",
    "RenderError",
    "RenderResult",
    "TextEngineError",
    "check_legibility",
    "draw_route",
    "layout_network",
    "layout_quality",
    "place_map",
    "render_map",
    "save_map",
]
