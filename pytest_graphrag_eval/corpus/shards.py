"""Which questions a shard (`--graphrag-shard K/N`) runs: stable under corpus edits, balanced by template.

Each template's questions, ordered by a hash of their id, are cut into N near-equal blocks rotated
by a template offset, so an added or removed question moves at most N - 1 others of its template.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_graphrag_eval.errors import ConfigurationError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class ShardSpec:
    """Shard `index` of `count`, both counted from 1 as the user writes them (`2/3`)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, name: str = "--graphrag-shard") -> ShardSpec:
    """`K/N` with 1 <= K <= N; anything else is a ConfigurationError naming the option."""
    match = _SPEC.fullmatch(text)
    if match is None:
        raise ConfigurationError(f"{name} must be K/N (this runner's shard K of N, e.g. 2/3), got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ConfigurationError(f"{name} {text}: the number of shards must be from 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ConfigurationError(
            f"{name} {text}: the shard number must be from 1 to {count} (shards are counted from 1)"
        )
    return ShardSpec(index, count)


def assign_shards(templates: Iterable[tuple[str, Sequence[str]]], count: int) -> dict[str, int]:
    """Each question id's shard (1..count); templates sharing an id across files are balanced together."""
    by_template: dict[str, list[str]] = {}
    for template_id, question_ids in templates:
        by_template.setdefault(template_id, []).extend(question_ids)
    shards: dict[str, int] = {}
    for template_id, question_ids in by_template.items():
        ordered = sorted(question_ids, key=lambda question_id: (_digest(question_id), question_id))
        offset = int(_digest(f"template:{template_id}"), 16) % count
        size = len(ordered)
        for rank, question_id in enumerate(ordered):
            block = rank * count // size
            shards[question_id] = (block + offset) % count + 1
    return shards


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
