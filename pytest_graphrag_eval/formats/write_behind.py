"""Writing a large output while its next part is made.

Compressing (zlib, zlib-ng) and writing to a file (`write`, `fdatasync`) let go of the GIL, so a second
thread can do them while this one encodes the next part: the two overlap instead of following
each other. One part is in flight at a time, so memory holds two parts at most, and an error in
writing stops the making at the next part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

Part = TypeVar("Part")


def write_behind(parts: Iterable[Part], write: Callable[[Part], object]) -> None:
    """`write(part)` for each of `parts`, in order, on a second thread while the next part is made."""
    with ThreadPoolExecutor(max_workers=1) as writer:
        writing: Future[object] | None = None
        for part in parts:
            if writing is not None:
                writing.result()
            writing = writer.submit(write, part)
        if writing is not None:
            writing.result()
