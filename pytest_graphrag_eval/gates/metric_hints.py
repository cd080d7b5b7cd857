"""Why a metric is missing, so a threshold or gate on it fails saying what to fix (each key's usual
cause is declared by its scorer in the catalogue of result keys)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_UNKNOWN_HINT = "no scorer produced this key; check the metric name"


def missing_metric_hint(metric: str, available: Iterable[str] = ()) -> str:
    """The usual reason `metric` was not computed, plus a did-you-mean from `available` keys."""
    import difflib

    from pytest_graphrag_eval.result_keys import CATALOGUE  # every scorer's keys: not for a merge's gates

    hint = CATALOGUE.missing_hint(metric) or _UNKNOWN_HINT
    close = difflib.get_close_matches(metric, sorted(set(available) - {metric}), n=1, cutoff=0.75)
    return f"{hint}; did you mean {close[0]!r}?" if close else hint


def metric_error(result: Mapping[str, Any], metric: str) -> tuple[str, str] | None:
    """The error key and text a scorer left for `metric`: `<metric>_error`, the family's shared key,
    then a scorer-wide `<prefix>_error` whose prefix starts the metric name (`retrieval_error`)."""
    from pytest_graphrag_eval.result_keys import CATALOGUE

    candidates = [f"{metric}_error"]
    if shared := CATALOGUE.error_key(metric):
        candidates.append(shared)
    candidates.extend(
        sorted(
            (
                key
                for key in result
                if isinstance(key, str) and key.endswith("_error") and metric.startswith(key[: -len("error")])
            ),
            key=len,
            reverse=True,
        )
    )
    for key in candidates:
        text = result.get(key)
        if text:
            return key, str(text)
    return None
