"""suites stage of the maptab pipeline."""
