"""On-disk cache of LLM replies: one JSON file per SHA-256 of the request, safe for concurrent writers.

Files are moved into place whole (`os.replace`), so another worker reads no file or a complete one;
an unreadable file is a miss. The API key is never part of a key or an entry.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

NAMESPACE = "llm-v1"  # bump when the entry layout changes; old entries are then ignored


def cache_key(parts: Mapping[str, object]) -> str:
    """A stable hex digest of JSON-serialisable request parts (order of mapping keys irrelevant)."""
    canonical = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Entries under `<cache_dir>/llm-v1/<2 hex>/<key>.json`."""

    def __init__(self, cache_dir: Path) -> None:
        self.root = Path(cache_dir) / NAMESPACE
        self._write_failed = False
        self._made_folders: set[Path] = set()  # one mkdir per folder, not per entry

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None when missing or unreadable."""
        path = self.path_for(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("ignoring unreadable LLM cache entry %s: %s", path, exc)
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            log.warning("ignoring malformed LLM cache entry %s", path)
            return None
        return data

    def put(self, key: str, entry: Mapping[str, object]) -> None:
        """Store atomically; a failing disk only loses the cache, never the run."""
        path = self.path_for(key)
        try:
            if path.parent not in self._made_folders:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._made_folders.add(path.parent)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({**entry, "key": key}, handle, ensure_ascii=False)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            if not self._write_failed:
                log.warning(
                    "cannot write LLM cache under %s (%s); continuing without storing", self.root, exc
                )
                self._write_failed = True


def cache_dir_problem(cache_dir: str | Path) -> str | None:
    """Why entries could not be stored under `cache_dir`, or None; checked at start-up, not at a miss."""
    path = Path(cache_dir)
    existing = next((folder for folder in (path, *path.parents) if folder.exists()), None)
    if existing is None:
        return None
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    return f"{existing} is not writable" if not os.access(existing, os.W_OK | os.X_OK) else None


def clear_cache(cache_dir: str | Path) -> int:
    """Delete this cache's namespace under `cache_dir` (nothing else there); the number of entries deleted."""
    root = Path(cache_dir) / NAMESPACE
    if not root.is_dir():
        return 0
    count = sum(1 for _ in root.glob("*/*.json"))
    shutil.rmtree(root, ignore_errors=True)
    return count
