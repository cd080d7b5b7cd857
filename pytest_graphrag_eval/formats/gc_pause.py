"""Pausing Python's cyclic garbage collector while a large input is built.

Parsing a corpus, a recording or a large step output allocates hundreds of
thousands of containers (YAML nodes, dicts, lists) that stay alive while the
structure grows. Each allocation burst triggers a collection, and the survivors
are traversed again and again, along with everything already loaded: on tens of
megabytes that traversal cost two to four times the parse itself. What a parse
builds holds no reference cycles (recursive YAML aliases are refused), so nothing
is lost by not looking for them until it is done.

When the block ends, what it built and kept is moved straight into the oldest
generation (`paused_gc`): left young, the first collection after the block would
traverse all of it and a middle one again, only to find it alive (on 10,000
questions, a twentieth of the scoring and of the load). Full collections still
traverse it, as they traverse everything.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore it after, only if it was enabled before,
    with the objects the block kept moved into the oldest generation (`promote_survivors`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            promote_survivors()
            gc.enable()


def promote_survivors() -> None:
    """Move every object the collector tracks into the oldest generation, in constant time.

    `gc.freeze()` moves them all into the permanent generation and `gc.unfreeze()` puts that back
    into the oldest one. Skipped when the process has frozen objects of its own (a server that
    freezes before it forks): unfreezing would hand its objects back to the collector.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


_NEVER = 2**31 - 1  # the largest threshold CPython accepts (a C int)
_full_collections_lock = threading.Lock()
_full_collections_paused = 0
_saved_thresholds: tuple[int, int, int] | None = None


@contextmanager
def paused_full_collections() -> Iterator[None]:
    """Let the collector look at young objects only for the block: no full collection.

    Scoring keeps what it builds (one result per question), so the oldest generation
    grows and each growth past a quarter triggers a full collection, a traversal of
    everything loaded: on a 6,000-question corpus three of them cost about as much as
    a third of the scoring itself. The young generations, where the short-lived cycles
    of scoring (exceptions, event-loop callbacks) die, are still collected; what reaches
    the oldest generation meanwhile waits for the next full collection after the block.
    Nested and concurrent blocks share one pause; the thresholds come back when the last ends.
    """
    global _full_collections_paused, _saved_thresholds
    with _full_collections_lock:
        if _full_collections_paused == 0:
            _saved_thresholds = gc.get_threshold()
            young, middle, _ = _saved_thresholds
            gc.set_threshold(young, middle, _NEVER)
        _full_collections_paused += 1
    try:
        yield
    finally:
        with _full_collections_lock:
            _full_collections_paused -= 1
            if _full_collections_paused == 0 and _saved_thresholds is not None:
                young, middle, _ = gc.get_threshold()
                gc.set_threshold(young, middle, _saved_thresholds[2])
                _saved_thresholds = None
