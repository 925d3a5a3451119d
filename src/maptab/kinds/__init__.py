"""The built-in task kinds, one module each (docs/tasks.md)."""
