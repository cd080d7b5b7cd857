"""Which step output texts were found empty or not when scoring parsed them.

The aggregates' step summary counts empty results (`aggregates.is_empty_output`), which
means parsing every actual step output once more after scoring parsed it: on typical data
most of the aggregation time. The parsers that read an output's whole shape (SPARQL
SELECT results, the IRIs of a search step) note here whether its `results.bindings` was
empty, which is exactly the question the summary asks of such a text; the summary looks
the text up before parsing it. Only texts are noted (compared by value, so an edited
output is a different key), and the memo keeps at most `CAPACITY_CHARS` characters of
them, oldest first out: a text it forgot is parsed again, with the same answer.
"""

from __future__ import annotations

import threading

CAPACITY_CHARS = 2**26
"""At most this many characters of output text are remembered (the texts scoring just held)."""

_known: dict[str, bool] = {}
_held = 0
_lock = threading.Lock()


def remember(text: str, empty: bool) -> None:
    """Note that `text`, SPARQL results JSON, has no bindings (`empty`) or some."""
    global _held
    size = len(text)
    if size > CAPACITY_CHARS:
        return
    with _lock:
        if text in _known:
            return
        while _known and _held + size > CAPACITY_CHARS:
            oldest = next(iter(_known))
            del _known[oldest]
            _held -= len(oldest)
        _known[text] = empty
        _held += size


def known(text: str) -> bool | None:
    """Whether `text` was found empty when it was parsed; None when it was not noted (or forgotten)."""
    return _known.get(text)
