"""Pausing Python's cyclic garbage collector while a large input is built.

Loading a corpus or a recording allocates hundreds of thousands of containers
(YAML nodes, dicts, lists) that all stay alive. Each allocation burst triggers a
collection, and the older generations are traversed again and again while the
structure grows: on a corpus of tens of megabytes that traversal cost several
times the parse itself. What is built here holds no reference cycles (recursive
YAML aliases are refused), so nothing is lost by not looking for them until the
load is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore it after, only if it was enabled before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
