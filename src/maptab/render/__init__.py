"""render stage of the maptab pipeline."""
