"""Untrusted text made safe to print.

Agent answers and step outputs may hold lone surrogates (text from a broken
decoder). They cannot be encoded for a terminal, and pytest's writer then
prints the whole failure as escaped ASCII; replacing just those code points
with U+FFFD keeps the rest of the failure report readable.
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


def printable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (everything else unchanged)."""
    return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)
