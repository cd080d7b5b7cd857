"""How outputs meant for PR pages and CI logs name a local file: never by the checkout's absolute path.

The terminal summary, the Markdown summary, the HTML report and the JSON report's display fields are
read on other machines, where `/home/runner/work/...` means nothing and leaks the runner's layout. A
file inside the rootdir (or the current folder) is named relative to it; a file outside both is named
as the user wrote it. The plugin makes option values absolute against the folder they were written
in (the invocation folder, the ini file's) without normalising them, so taking that folder back off
(`../base.json`) gives the user's spelling; an absolute value is shown as it was written. The identity
fields the merge compares (`metadata.settings`, file hashes) keep what they need, not these names.

The terminal is read where the command ran: there a file is named from the current folder
(`printed_path`), so the path printed is the one to open.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath


def shown_path(path: str | PurePath, *folders: Path) -> str:
    """`path` relative to the first of `folders` that holds it, else as the user wrote it."""
    path = Path(path)
    if not path.is_absolute():
        return path.as_posix()
    normal = Path(os.path.normpath(path))
    for folder in folders:
        if normal.is_relative_to(folder):
            return normal.relative_to(folder).as_posix()
    for folder in folders:  # outside: the value as written against this folder (`../base.json`)
        if path.is_relative_to(folder):
            return path.relative_to(folder).as_posix()
    return str(path)


def printed_path(path: str | PurePath, current_folder: Path) -> str:
    """How the terminal names a file it wrote or read: relative to the current folder when inside it
    (the path to type next), else absolute. One rule for every output, whatever the rootdir: a path
    relative to the rootdir points elsewhere when pytest was started from another folder."""
    normal = Path(os.path.normpath(current_folder / path))
    if normal.is_relative_to(current_folder):
        return normal.relative_to(current_folder).as_posix()
    return str(normal)
