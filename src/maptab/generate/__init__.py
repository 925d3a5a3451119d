"""build stage of the maptab pipeline."""
