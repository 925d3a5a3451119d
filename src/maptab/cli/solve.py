"""``maptab solve``."""
