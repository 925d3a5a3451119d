"""The domain: route networks, their tables and costs, the exact solver, the records."""
