"""``maptab run``."""
