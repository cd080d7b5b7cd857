"""How outputs read on other machines (PR pages, CI logs) name a local file: relative to the rootdir
or current folder, else as the user wrote it, never by the checkout's absolute path."""

from __future__ import annotations

import os
from pathlib import Path, PurePath


def shown_path(path: str | PurePath, *folders: Path) -> str:
    """`path` relative to the first of `folders` that holds it, else as the user wrote it."""
    path = Path(path)
    if not path.is_absolute():
        return path.as_posix()
    # Normalised first; outside every folder, the value as written against one (`../base.json`).
    for candidate in (Path(os.path.normpath(path)), path):
        for folder in folders:
            if candidate.is_relative_to(folder):
                return candidate.relative_to(folder).as_posix()
    return str(path)


def printed_path(path: str | PurePath, current_folder: Path) -> str:
    """How the terminal names a file: relative to the current folder when inside it (the path to type
    next), else absolute."""
    normal = Path(os.path.normpath(current_folder / path))
    if normal.is_relative_to(current_folder):
        return normal.relative_to(current_folder).as_posix()
    return str(normal)
