"""run stage of the maptab pipeline."""
