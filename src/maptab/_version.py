"""The installed version of maptab."""

__version__ = "0.1.0"
