"""The values `judge:` gates read from the report's `judge_calibration` section, in a module free of
the judged metrics so the gates (and a merge) do not import the LLM judges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATS = ("kappa", "kappa_low", "accuracy", "alpha", "alpha_low", "labels")


def gate_value(section: Mapping[str, Any], metric: str, stat: str) -> tuple[float | None, str]:
    """A `judge:` gate's value from the section, or None and why it is missing."""
    summary = (section.get("metrics") or {}).get(metric)
    if not isinstance(summary, Mapping):
        known = ", ".join(sorted(section.get("metrics") or {})) or "none"
        return None, f"no labels of {metric} were calibrated (metrics with labels: {known})"
    if stat == "labels":
        return float(summary["judged"]), ""
    if stat in ("kappa_low", "alpha_low"):
        interval = summary.get(f"{stat.removesuffix('_low')}_interval")
        value = interval.get("low") if isinstance(interval, Mapping) else None
    else:
        value = summary.get(stat)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value), ""
    why = summary.get(f"{stat.removesuffix('_low')}_undefined") or f"{stat} was not computed"
    return None, str(why)
