"""``maptab build``."""
