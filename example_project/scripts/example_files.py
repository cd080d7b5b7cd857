"""File helpers shared by the example project's generator scripts."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

EXAMPLE_ROOT = Path(__file__).resolve().parents[1]

if str(EXAMPLE_ROOT) not in sys.path:
    # The scripts import the example agent (`grid_agent`), which lives next to this folder.
    sys.path.insert(0, str(EXAMPLE_ROOT))


def write_atomically(path: Path, content: str) -> None:
    """Write via a temporary file in the same folder so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(content)
        os.chmod(temporary, 0o644)  # mkstemp creates 0600; these files are committed and shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
