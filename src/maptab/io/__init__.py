"""Reading and writing datasets and ReasonMap metadata."""
