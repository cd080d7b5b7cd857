"""Pausing Python's cyclic garbage collector while a large input is built.

Parsing a corpus, a recording or a large step output allocates hundreds of
thousands of containers (YAML nodes, dicts, lists) that stay alive while the
structure grows. Each allocation burst triggers a collection, and the survivors
are traversed again and again, along with everything already loaded: on tens of
megabytes that traversal cost two to four times the parse itself. What a parse
builds holds no reference cycles (recursive YAML aliases are refused), so nothing
is lost by not looking for them until it is done.
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
