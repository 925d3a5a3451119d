"""``maptab report``."""
