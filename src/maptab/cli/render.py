"""``maptab render``."""
