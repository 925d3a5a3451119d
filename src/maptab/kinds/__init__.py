"""The built-in task kinds, one module each (docs/guides/add-a-task-kind.md)."""
