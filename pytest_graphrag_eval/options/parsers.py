"""One parser per kind of setting: (raw value, label naming the option, layer "cli"/"ini") -> the
checked value, or a `ConfigurationError` saying what was expected, the same for plugin and commands."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_graphrag_eval.corpus.shards import ShardSpec, parse_shard
from pytest_graphrag_eval.errors import ConfigurationError, HistoryError
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.suite_gates import parse_gate_list
from pytest_graphrag_eval.gates.thresholds import Threshold, parse_threshold_list
from pytest_graphrag_eval.history.locations import parse_location

HISTORY_PREFIX = "history:"
"""A baseline given as `history:REF` is a run of the history, not a report file."""


class HistoryRef(str):
    """`--graphrag-baseline history:REF`: the REF, told apart from a baseline file's path by its type."""


RawValue = str | bool | Path | Sequence[str] | Sequence[Path]
"""What pytest hands over for one layer: argparse's string or list, an ini string, bool, lines or paths."""


def text(value: RawValue, label: str, layer: str) -> str:
    return str(value).strip()


def texts(value: RawValue, label: str, layer: str) -> tuple[str, ...]:
    """Names given together (`--clear KEY KEY`), each as `text` takes it."""
    return tuple(item.strip() for item in _lines(value))


def choice(*choices: str) -> Callable[[RawValue, str, str], str]:
    """One of `choices` (ini values are plain text, so argparse's own check does not cover them)."""

    def parse(value: RawValue, label: str, layer: str) -> str:
        chosen = str(value).strip()
        if chosen not in choices:
            raise ConfigurationError(f"{label} must be one of {', '.join(choices)}, got {chosen!r}")
        return chosen

    return parse


def whole_number(lowest: int, highest: int) -> Callable[[RawValue, str, str], int]:
    """A whole number from `lowest` to `highest` (the upper bound catches an extra zero)."""

    def parse(value: RawValue, label: str, layer: str) -> int:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ConfigurationError(f"{label} must be a whole number, got {value!r}") from None
        if not lowest <= number <= highest:
            raise ConfigurationError(f"{label} must be between {lowest} and {highest}, got {number}")
        return number

    return parse


def seconds(value: RawValue, label: str, layer: str) -> float:
    """A duration: a finite number of seconds above 0 (0 would mean "give up at once", not "no limit")."""
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ConfigurationError(f"{label} must be a number of seconds > 0, got {str(value).strip()!r}")
    return number


def limit(
    kind: type[int] | type[float], what: str, highest: float = math.inf
) -> Callable[[RawValue, str, str], float]:
    """A budget: a finite number >= 0 of `kind` (0 is a real budget: nothing may be spent)."""

    def parse(value: RawValue, label: str, layer: str) -> float:
        try:
            number: float = kind(str(value).strip())
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and 0 <= number <= highest):
            bounds = ">= 0" if highest == math.inf else f"from 0 to {highest:g}"
            raise ConfigurationError(f"{label} must be {what} {bounds}, got {str(value).strip()!r}")
        return number

    return parse


def percent(value: RawValue, label: str, layer: str) -> float:
    """A confidence given in percent (95) as a fraction (0.95); 50 to below 100."""
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ConfigurationError(f"{label} must be a percentage such as 95, got {value!r}") from None
    if not 50 <= number < 100:
        raise ConfigurationError(f"{label} must be from 50 to below 100 (percent), got {value!r}")
    return number / 100


def path_or_url(value: RawValue, label: str, layer: str) -> str:
    """A file (made absolute by the layer reader) or the graph's http(s) URL, as given; a blank value (an
    unset variable in a CI script) is refused, never read as no file or as the current folder."""
    if not str(value).strip():
        raise ConfigurationError(f"{label} must name a file, not be blank")
    return str(value)


def path(value: RawValue, label: str, layer: str) -> Path:
    return Path(path_or_url(value, label, layer))


def baseline(value: RawValue, label: str, layer: str) -> Path | HistoryRef:
    """A baseline report file (made absolute by the layer reader), or `history:REF`, a run of the history."""
    given = str(value).strip()
    if not given.startswith(HISTORY_PREFIX):
        return path(value, label, layer)
    ref = given.removeprefix(HISTORY_PREFIX).strip()
    if not ref:
        raise ConfigurationError(
            f"{label} history: needs a run: history:last, history:last-passed, history:BRANCH "
            "or history:RUN (a run id or key from graphrag-eval-history URL list)"
        )
    return HistoryRef(ref)


def history_url(value: RawValue, label: str, layer: str) -> str:
    """A history database (URL or SQLite path); one that can never be opened stops the run here."""
    try:
        parse_location(str(value))
    except HistoryError as error:
        raise ConfigurationError(f"{label}: {error}") from None
    return str(value)


def flag(value: RawValue, label: str, layer: str) -> bool:
    return bool(value)


def no(value: RawValue, label: str, layer: str) -> bool:
    """A `--graphrag-no-x` flag: given, it turns x off."""
    return not value


def shard(value: RawValue, label: str, layer: str) -> ShardSpec:
    return parse_shard(str(value).strip())


def thresholds(value: RawValue, label: str, layer: str) -> dict[str, Threshold]:
    return parse_threshold_list(_lines(value), layer)


def gates(value: RawValue, label: str, layer: str) -> list[Gate]:
    return parse_gate_list(_lines(value), layer)


def paths(value: RawValue, label: str, layer: str) -> tuple[Path, ...]:
    return tuple(path(item, label, layer) for item in _lines(value))


def tool_names(value: RawValue, label: str, layer: str) -> dict[str, str]:
    """`agent = corpus` lines; one agent tool mapped twice in one layer is refused, not guessed."""
    mapping: dict[str, str] = {}
    for line in _lines(value):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        agent_name, separator, corpus_name = (part.strip() for part in line.partition("="))
        if not separator or not agent_name or not corpus_name:
            raise ConfigurationError(f"{label}: expected 'agent_name = corpus_name', got {line.strip()!r}")
        if mapping.get(agent_name, corpus_name) != corpus_name:
            raise ConfigurationError(
                f"{label}: the agent tool {agent_name!r} is mapped twice, to {mapping[agent_name]!r} and to "
                f"{corpus_name!r}; keep one mapping per agent tool"
            )
        mapping[agent_name] = corpus_name
    return mapping


def _lines(value: RawValue) -> list[str]:
    if isinstance(value, (str, Path)):
        return [str(value)]
    if isinstance(value, bool):
        return []
    return [str(item) for item in value]
