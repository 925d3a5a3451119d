"""report stage of the maptab pipeline."""
