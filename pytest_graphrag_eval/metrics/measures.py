"""Metric names as pytrec_eval spells them, parsed into a plan of what to compute.

As in pytrec_eval, a plain name next to the same measure with cut-offs adds nothing, and result
keys are always `<measure>_<cutoff>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_graphrag_eval.errors import ConfigurationError

DEFAULT_CUTOFFS: dict[str, tuple[int, ...]] = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
}
SINGLE_MEASURES = ("map", "recip_rank", "ndcg")
SUPPORTED = (*DEFAULT_CUTOFFS, *SINGLE_MEASURES)
_WITH_CUTOFFS = re.compile(r"(P|recall|success|ndcg_cut|map_cut)[._](\d+(?:,\d+)*)")

Cutoffs = tuple[tuple[int, str], ...]
"""(cut-off, result key) pairs in increasing cut-off order."""


@dataclass(frozen=True)
class MeasurePlan:
    """Which measures to compute, with their cut-offs and result keys precomputed."""

    precision: Cutoffs = ()
    recall: Cutoffs = ()
    success: Cutoffs = ()
    ndcg_cut: Cutoffs = ()
    map_cut: Cutoffs = ()
    map: bool = False
    recip_rank: bool = False
    ndcg: bool = False


def parse_measures(metrics: str | Iterable[str], full_length: int | None = None) -> MeasurePlan:
    """Parse metric names; ConfigurationError names what is not supported.

    With `full_length` (eRAG's convention) a measure named without cut-off is taken at that length
    and keyed by its plain name, instead of trec_eval's default cut-offs.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    cutoffs: dict[str, set[int]] = {}
    plain: set[str] = set()
    singles: set[str] = set()
    for name in names:
        if not isinstance(name, str):
            raise ConfigurationError(f"metric names must be texts, got {name!r}")
        if name in SINGLE_MEASURES:
            singles.add(name)
        elif name in DEFAULT_CUTOFFS:
            cutoffs.setdefault(name, set())
            plain.add(name)
        elif match := _WITH_CUTOFFS.fullmatch(name):
            values = {int(value) for value in match.group(2).split(",")}
            if 0 in values:
                raise ConfigurationError(f"metric {name!r}: cut-offs must be positive")
            cutoffs.setdefault(match.group(1), set()).update(values)
        else:
            raise ConfigurationError(_unsupported(name))

    def keys_for(measure: str) -> Cutoffs:
        if measure not in cutoffs:
            return ()
        return _cutoff_keys(measure, cutoffs[measure], measure in plain, full_length)

    return MeasurePlan(
        precision=keys_for("P"),
        recall=keys_for("recall"),
        success=keys_for("success"),
        ndcg_cut=keys_for("ndcg_cut"),
        map_cut=keys_for("map_cut"),
        map="map" in singles,
        recip_rank="recip_rank" in singles,
        ndcg="ndcg" in singles,
    )


def _cutoff_keys(measure: str, values: set[int], plain: bool, full_length: int | None) -> Cutoffs:
    if full_length is not None:
        whole = ((max(full_length, 1), measure),) if plain else ()
        return tuple((cutoff, f"{measure}_{cutoff}") for cutoff in sorted(values)) + whole
    chosen = sorted(values) if values else DEFAULT_CUTOFFS[measure]
    return tuple((cutoff, f"{measure}_{cutoff}") for cutoff in chosen)


def _unsupported(name: str) -> str:
    hint = ""
    if re.fullmatch(r"ndcg[._]\d+", name):
        hint = f" (nDCG at a cut-off is spelled 'ndcg_cut_{name[5:]}')"
    elif re.fullmatch(r"map[._]\d+", name):
        hint = f" (AP at a cut-off is spelled 'map_cut_{name[4:]}')"
    supported = ", ".join(f"{measure}_k" for measure in DEFAULT_CUTOFFS)
    return f"unsupported retrieval metric {name!r}{hint}; supported: {supported}, {', '.join(SUPPORTED)}"
