"""The build step of the optional C accelerators ``maptab._solvercore`` (docs/cost-model.md,
"The C search") and ``maptab._scorecore`` (docs/scoring.md, "Performance"); everything else
about the package is in pyproject.toml.

``optional=True``: where they cannot be compiled (no C compiler) the install goes on without
them and maptab runs its Python loops, with the same answers. ``-ffp-contract=off``: no
fused multiply-add, so every product and sum rounds as Python's and numpy's do.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "maptab._solvercore",
            sources=["src/maptab/_solvercore.c"],
            optional=True,
            extra_compile_args=["-O2", "-ffp-contract=off"],
        ),
        Extension(
            "maptab._scorecore",
            sources=["src/maptab/_scorecore.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
