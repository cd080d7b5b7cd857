"""Atomic file writes: readers (CI uploaders, a second pytest run) never see half a report."""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path


@functools.cache
def _umask() -> int:
    """The process umask, read once (reading it means setting it, which is not thread-safe)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` (as UTF-8) to a temporary file beside `path` and rename it into place."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes | Sequence[bytes]) -> None:
    """Write `data` (or its parts in order: a large file is not joined into one more copy first) to
    a temporary file beside `path` and rename it into place.

    The file gets the mode a plain `open()` would give it (0666 less the umask), not mkstemp's 0600.
    """
    finish_atomic(temporary_beside(path), path, data, mode="wb")


def temporary_beside(path: Path) -> Path:
    """A new empty temporary file beside `path` (same folder: the rename stays in one file system)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    return Path(temporary)


def finish_atomic(temporary: Path, path: Path, data: bytes | Sequence[bytes], *, mode: str) -> None:
    """Write `data` to `temporary` (`mode` "wb", or "ab" after a part written earlier), sync it and
    rename it to `path`; the temporary file is removed if anything fails."""
    try:
        with open(temporary, mode) as stream:
            stream.writelines([data] if isinstance(data, bytes) else data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
