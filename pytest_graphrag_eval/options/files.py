"""The files a run or a console script reads and writes, checked together before any work, so an
output that cannot be written, or that would land on another output or on a file being read (a shard,
the history, the labels), is refused in the same words by the plugin and every command."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.history.locations import parse_location

Named = tuple[str, Path | None]  # (the option's name in messages, its path; None when not given)


def check_files(outputs: Iterable[Named], inputs: Iterable[Named] = ()) -> None:
    """Refuse an output that could not be written, and one file given under two options."""
    given = [(label, path) for label, path in outputs if path is not None]
    for label, output in given:
        if problem := output_path_problem(output):
            raise ConfigurationError(f"{label} {output}: {problem}")
    named: dict[Path, str] = {}
    for label, file in (*given, *inputs):
        if file is not None and (first := named.setdefault(file.resolve(), label)) != label:
            raise ConfigurationError(f"{first} and {label} name one file, {file}: give each its own")


def history_file(url: str | None) -> Path | None:
    """The SQLite file of a history URL (None for PostgreSQL), to keep the outputs off it."""
    return parse_location(url).path if url else None


def output_path_problem(path: Path) -> str | None:
    """Why a file could not be written at `path` (its folder would be created if missing), or None."""
    if path.is_dir():
        return "is a folder; give a file name"
    existing = next((folder for folder in path.parents if folder.exists()), None)
    if existing is None:
        return None
    if not existing.is_dir():
        return f"{existing} is a file, so the report's folder cannot be created"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"the folder {existing} is not writable"
    return "the file exists and is not writable" if path.exists() and not os.access(path, os.W_OK) else None
