"""Atomic file writes: readers (CI uploaders, a second pytest run) never see half a report, and a
write cut short (an error, Ctrl-C, a merge stopped by SIGTERM) leaves no temporary file behind."""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` (as UTF-8) to a temporary file beside `path` and rename it into place."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes | Sequence[bytes]) -> None:
    """Write `data` (or its parts in order: a large file is not joined into one more copy first) to
    a temporary file beside `path` (same folder: the rename stays in one file system), sync it once
    and rename it into place.

    The temporary file's name is chosen before it exists, so whatever stops the write (any
    exception, `KeyboardInterrupt` and `SystemExit` included) removes it. It is created as a plain
    `open()` creates a file, with mode 0666 less the umask, and never replaces a file it did not make.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    try:
        with open(temporary, "xb") as stream:
            stream.writelines([data] if isinstance(data, bytes) else data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
