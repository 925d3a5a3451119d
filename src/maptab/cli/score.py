"""``maptab score``."""
