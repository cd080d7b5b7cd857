"""Atomic file writes: readers (CI uploaders, a second pytest run) never see half a report, and a
write cut short (an error, Ctrl-C, a merge stopped by SIGTERM) leaves no temporary file behind."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` (as UTF-8) to a temporary file beside `path` and rename it into place."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write `data` (or its parts, not joined into one more copy) to a new temporary file beside `path`,
    sync it once and rename it into place; whatever stops the write, Ctrl-C included, removes it."""
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
