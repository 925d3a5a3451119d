"""``maptab validate``."""
