"""The order in which a template's candidate bindings are tried (seeded shuffle, optionally
stratified); a regeneration tries the previous corpus's questions first, so they survive while
their binding still qualifies."""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

from pytest_graphrag_eval.generate.templates import Sampling

Item = TypeVar("Item")


def sampling_order(
    candidates: Sequence[Item],
    sampling: Sampling,
    stratum: Callable[[Item], str],
    identity: Callable[[Item], str],
    previous: Collection[str] = (),
) -> list[Item]:
    """`candidates` in the order they are tried."""
    if sampling.count is None:
        ordered = list(candidates)
    elif sampling.stratify is None:
        ordered = list(candidates)
        random.Random(sampling.seed).shuffle(ordered)
    else:
        ordered = _interleaved_strata(candidates, sampling.seed, stratum)
    if not previous:
        return ordered
    kept = [item for item in ordered if identity(item) in previous]
    return kept + [item for item in ordered if identity(item) not in previous]


def _interleaved_strata(candidates: Sequence[Item], seed: int, stratum: Callable[[Item], str]) -> list[Item]:
    strata: dict[str, list[Item]] = {}
    for item in candidates:
        strata.setdefault(stratum(item), []).append(item)
    generator = random.Random(seed)
    for members in strata.values():
        generator.shuffle(members)
    deepest = max(map(len, strata.values()), default=0)
    return [members[depth] for depth in range(deepest) for members in strata.values() if depth < len(members)]
