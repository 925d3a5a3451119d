"""The build step of the optional C accelerator ``maptab._solvercore`` (docs/cost-model.md,
"The C search"); everything else about the package is in pyproject.toml.

``optional=True``: where it cannot be compiled (no C compiler) the install goes on without
it and the solver runs its Python loops, with the same answers. ``-ffp-contract=off``: no
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
        )
    ]
)
