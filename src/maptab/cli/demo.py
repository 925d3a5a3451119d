"""``maptab demo``."""
