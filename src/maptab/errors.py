"""The exception root of maptab (SPEC 16).

Every error a user can cause (bad tables, bad datasets, bad flags, unreachable servers) is a
:class:`MaptabError`; the CLI prints those as one line and exits non-zero. Anything else that
escapes is a bug in maptab and is shown as such.
"""

from __future__ import annotations


class MaptabError(ValueError):
    """A user-facing error: the message names the file, row or field at fault."""
