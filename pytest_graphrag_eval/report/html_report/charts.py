"""Chart geometry for server-side SVG, so the page needs no charting script, prints sharply and
takes its colours from CSS."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

HIST_WIDTH = 300
HIST_HEIGHT = 120
UNIT_BINS = 10
OTHER_BINS = 12


@dataclass(slots=True)  # not frozen: a page draws tens of thousands, and a frozen init costs six times more
class Bin:
    """One histogram bar in SVG units, with its tooltip."""

    x: float
    y: float
    width: float
    height: float
    count: int
    label: str


@dataclass(frozen=True)
class Histogram:
    bins: tuple[Bin, ...]
    low_label: str
    high_label: str
    count: int
    missing: int
    mean: float | None
    peak: int


def fmt(value: object, digits: int = 3) -> str:
    """Short number text: integers without decimals, others with up to `digits` significant places."""
    kind = type(value)
    if kind is float or kind is int:  # a page repeats the same bin edges and means: each formatted once
        return _number_text(value, digits)
    if value is None:
        return "–"
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return str(value)
    return _number_text(value, digits)


def percent(value: object) -> str:
    """A pass rate (a number from a report's comparison, or None) in percent."""
    if value is None:
        return "–"
    return f"{cast(float, value) * 100:.1f}".removesuffix(".0") + "%"


def signed(value: object, style: str = "num") -> str:
    """A delta with its sign; pass-rate deltas in percentage points."""
    if value is None:
        return "–"
    number = cast(float, value)
    sign = "+" if number > 0 else "−" if number < 0 else "±"
    return sign + (f"{abs(number) * 100:.1f} pp" if style == "pct" else fmt(abs(number)))


@functools.lru_cache(maxsize=8192, typed=True)
def _number_text(value: float, digits: int) -> str:
    if not math.isfinite(value):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}" if abs(value) < 1 else f"{value:.{digits + 1}g}"


def histogram(values: Sequence[float | None], *, unit_interval: bool) -> Histogram:
    """Counts of `values` in equal bins: tenths for scores, integers or twelfths of the range otherwise."""
    present = [value for value in values if value is not None]
    edges = _edges(present, unit_interval)
    counts = [0] * (len(edges) - 1)
    for value in present:
        counts[_bin_index(value, edges)] += 1
    return _drawn(counts, edges, present, len(values) - len(present))


def group_histograms(
    values: Sequence[float | None], groups: Mapping[str, Sequence[int]], *, unit_interval: bool
) -> dict[str, Histogram]:
    """`histogram` of all `values` ("") and of each group's; the bins are the same tenths for every
    group, so each value's bin is found once."""
    if not unit_interval:
        charts = {"": histogram(values, unit_interval=False)}
        for name, members in groups.items():
            charts[name] = histogram([values[index] for index in members], unit_interval=False)
        return charts
    last = UNIT_BINS - 1
    # `_bin_index` on the tenths is value * 10, exactly; scores take few distinct values, each binned once.
    tenth = {value: min(max(int(value * UNIT_BINS), 0), last) for value in set(values) if value is not None}
    charts = {"": _unit_histogram(values, range(len(values)), tenth)}
    for name, members in groups.items():
        charts[name] = _unit_histogram(values, members, tenth)
    return charts


def _unit_histogram(
    values: Sequence[float | None], members: Sequence[int], tenth: Mapping[float, int]
) -> Histogram:
    """The histogram of the `values` at `members`, each counted in its bin (`tenth`) in one pass."""
    present = [value for index in members if (value := values[index]) is not None]
    counts = [0] * UNIT_BINS
    for value in present:
        counts[tenth[value]] += 1
    return _drawn(counts, _UNIT_EDGES, present, len(members) - len(present))


def _drawn(counts: list[int], edges: Sequence[float], present: Sequence[float], missing: int) -> Histogram:
    """The bars of `counts` in the bins between `edges`, with the values' count and mean."""
    mean = sum(present) / len(present) if present else None
    peak = max(counts, default=0)
    return Histogram(
        _bars(tuple(counts), tuple(edges)), fmt(edges[0]), fmt(edges[-1]), len(present), missing, mean, peak
    )


@functools.lru_cache(maxsize=4096)
def _bars(counts: tuple[int, ...], edges: tuple[float, ...]) -> tuple[Bin, ...]:
    """The bars of `counts` on these edges, under the tallest: a page's histograms repeat the same counts
    (templates of a few questions), and `round` to two places is slow enough to matter."""
    peak = max(counts, default=0)
    bars = []
    for (x, width, label), count in zip(_bar_slots(edges), counts, strict=True):
        height = 0.0 if not peak else (HIST_HEIGHT - 4) * count / peak
        bars.append(Bin(x, round(HIST_HEIGHT - height, 2), width, round(height, 2), count, f"{label}{count}"))
    return tuple(bars)


@functools.lru_cache(maxsize=256)
def _bar_slots(edges: tuple[float, ...]) -> tuple[tuple[float, float, str], ...]:
    """Each bar's x, width and tooltip up to its count: the same for every histogram on these edges (every
    score's, for one), so worked out once."""
    bars = len(edges) - 1
    width = HIST_WIDTH / bars
    return tuple(
        (
            round(index * width + 1, 2),
            round(max(width - 2, 1), 2),
            f"[{fmt(edges[index])}, {fmt(edges[index + 1])}{']' if index == bars - 1 else ')'}: ",
        )
        for index in range(bars)
    )


_UNIT_EDGES = [index / UNIT_BINS for index in range(UNIT_BINS + 1)]


def _edges(values: Sequence[float], unit_interval: bool) -> list[float]:
    if unit_interval:
        return list(_UNIT_EDGES)
    if not values:
        return [0.0, 1.0]
    low, high = min(values), max(values)
    if low == high:
        return [low - 0.5, high + 0.5]
    if all(float(value).is_integer() for value in values) and high - low < OTHER_BINS * 2:
        return [low - 0.5 + index for index in range(int(high - low) + 2)]
    step = (high - low) / OTHER_BINS
    return [low + index * step for index in range(OTHER_BINS)] + [high]


def _bin_index(value: float, edges: Sequence[float]) -> int:
    """The bin of `value`; the top edge belongs to the last bin."""
    last = len(edges) - 2
    span = edges[-1] - edges[0]
    index = int((value - edges[0]) / span * (last + 1)) if span else 0
    return min(max(index, 0), last)


@dataclass(frozen=True)
class DeltaBar:
    """A delta and its confidence interval on a symmetric axis, as fractions of the width (0..1)."""

    zero: float
    bar_start: float
    bar_end: float
    ci_start: float | None
    ci_end: float | None
    direction: str


def delta_scale(values: Sequence[float | None]) -> float:
    """A round axis half-width covering every delta and interval end."""
    largest = max((abs(value) for value in values if value is not None), default=0.0)
    for candidate in (0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0):
        if largest <= candidate:
            return candidate
    return float(10 ** math.ceil(math.log10(largest)))


def delta_bar(delta: float | None, low: float | None, high: float | None, scale: float) -> DeltaBar:
    def place(value: float) -> float:
        return round(min(max(0.5 + value / (2 * scale), 0.0), 1.0), 4)

    value = delta or 0.0
    start, end = sorted((place(0.0), place(value)))
    direction = "up" if value > 0 else "down" if value < 0 else "flat"
    has_ci = low is not None and high is not None
    return DeltaBar(
        zero=place(0.0),
        bar_start=start,
        bar_end=end,
        ci_start=place(low) if has_ci and low is not None else None,
        ci_end=place(high) if has_ci and high is not None else None,
        direction=direction,
    )
