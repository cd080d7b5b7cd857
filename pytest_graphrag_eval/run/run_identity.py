"""What a report records so that partial runs (shards) can be checked and merged into one: its corpus
files' hashes, the settings that change results, and a partial run's positions in the corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.formats.json_types import Order

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


def run_identity(
    corpus_files: Sequence[Path],
    corpus_records: Mapping[Path, Mapping[str, Any]],
    answered: Iterable[Order],
    reported: Iterable[Order],
    settings_record: Mapping[str, Any],
    shard: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The report metadata that lets graphrag-eval-merge check and merge this run's report with other
    shards': corpus files, settings, and for a partial run its share."""
    files = [dict(corpus_records.get(path) or corpus_file_record(str(path), "", 0)) for path in corpus_files]
    answered_keys = set(answered)
    done = [(key[0], key[2]) for key in sorted(answered_keys)]
    unanswered = [(key[0], key[2]) for key in reported if key not in answered_keys]
    metadata: dict[str, Any] = {"corpus_files": files, "settings": dict(settings_record)}
    if shard is not None:
        metadata["shard"] = dict(shard)
    positions = corpus_positions(done, unanswered, sum(file["questions"] for file in files))
    if positions is not None:
        metadata["corpus_positions"] = positions
    return metadata
