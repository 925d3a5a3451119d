"""score stage of the maptab pipeline."""
