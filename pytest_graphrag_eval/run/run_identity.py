"""What a report records so that partial runs (shards) can be checked and merged into one: its corpus
files' hashes, the settings that change results, and a partial run's positions in the corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

Position = tuple[int, int]  # (index of the corpus file in the run, position of the question in it)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes: the same corpus on every runner has the same one."""
    return bytes_sha256(path.read_bytes())


def bytes_sha256(data: bytes) -> str:
    """`file_sha256` of bytes already read."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def corpus_file_record(display_name: str, sha256: str, questions: int) -> dict[str, Any]:
    return {"file": display_name, "sha256": sha256, "questions": questions}


def corpus_positions(
    result_positions: Sequence[Position], unanswered: Iterable[Position], total_questions: int
) -> dict[str, Any] | None:
    """Where a partial run's results sit in the corpus; None when its results are the whole corpus."""
    if len(result_positions) == total_questions:
        return None
    return {
        "results": [list(position) for position in result_positions],
        "unanswered": sorted(list(position) for position in unanswered),
    }


def settings_record(
    *,
    thresholds: Iterable[Any],
    gates: Iterable[Any],
    confidence: float,
    resamples: int,
    baseline: Mapping[str, str | None] | None,
    other: Mapping[str, object],
) -> dict[str, Any]:
    """The settings a merge checks are equal across shards, as JSON values (`other`: already JSON)."""
    return {
        "thresholds": [[threshold.expression, threshold.source] for threshold in thresholds],
        "gates": [[gate.expression, gate.source] for gate in gates],
        "confidence": confidence,
        "resamples": resamples,
        "baseline": dict(baseline) if baseline is not None else None,
        **other,
    }


def identity_metadata(
    corpus_files: Sequence[Mapping[str, object]],
    settings: Mapping[str, object],
    *,
    shard: Mapping[str, object] | None,
    positions: Mapping[str, object] | None,
) -> dict[str, Any]:
    """The report metadata a merge reads: corpus files, settings, and for a partial run its share."""
    metadata: dict[str, Any] = {
        "corpus_files": [dict(record) for record in corpus_files],
        "settings": dict(settings),
    }
    if shard is not None:
        metadata["shard"] = dict(shard)
    if positions is not None:
        metadata["corpus_positions"] = dict(positions)
    return metadata
