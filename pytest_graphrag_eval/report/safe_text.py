"""Untrusted text made safe to print: lone surrogates become U+FFFD, where pytest's writer would
print the whole failure as escaped ASCII."""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


def printable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (everything else unchanged)."""
    return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)
