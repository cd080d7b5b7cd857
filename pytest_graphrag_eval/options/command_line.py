"""The console scripts' options, built from the plugin's declarations under the commands' own flags,
so a value the plugin refuses is refused in the same words, as an argparse usage error (exit 2)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.options.declarations import OPTION_BY_DEST, OptionSpec
from pytest_graphrag_eval.options.parsers import RawValue

_KEEP: Any = object()
"""An override left out: the declaration's own value stands."""

FLAG = OptionSpec("--flag", "", action="store_true", default=False)
"""A command-only on/off flag (`--json`, `--dry-run`)."""

_SHAPES: dict[str, dict[str, Any]] = {
    "store": {},
    "store_true": {"nargs": 0},
    "append": {},  # repeatable: --gate A --gate B
    "extend": {"nargs": "+"},  # several values after one flag: --clear KEY KEY
}


class CheckedOption(argparse.Action):
    """Stores the value its `spec` (the command's own) parses; `origin` is the declaration it came from.
    Repeated values are joined as the plugin joins one layer's lines."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, *, spec: OptionSpec, origin: OptionSpec, **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.spec = spec
        self.origin = origin

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        raw: RawValue = True if self.nargs == 0 else values if isinstance(values, list) else str(values)
        try:
            parsed = self.spec.parse_layer(raw, "cli")
        except ConfigurationError as error:
            parser.error(self._in_own_words(str(error)))  # exits 2 after the (sub)command's usage line
        if self.spec.action in ("append", "extend"):
            parsed = _joined(getattr(namespace, self.dest), parsed)
        setattr(namespace, self.dest, parsed)

    def _in_own_words(self, message: str) -> str:
        """A parser that names the plugin's flag itself (a threshold's or gate's grammar) names the
        command's instead: `--threshold: invalid threshold ...`, not `--graphrag-threshold: ...`."""
        if message.startswith(self.origin.flag) and self.origin.flag != self.spec.flag:
            return self.spec.flag + message[len(self.origin.flag) :]
        return message


def _joined(previous: Any, parsed: Any) -> object:
    if isinstance(parsed, Mapping):
        return {**previous, **parsed}
    return (*previous, *parsed)


def declared(dest: str) -> OptionSpec:
    return OPTION_BY_DEST[dest]


def add_option(
    parser: argparse.ArgumentParser,
    flag: str,
    spec: OptionSpec,
    *,
    short: str | None = None,
    dest: str | None = None,
    help: str = _KEEP,
    default: object = _KEEP,
    choices: tuple[str, ...] | None = _KEEP,
    required: bool = False,
) -> OptionSpec:
    """Add `spec` to `parser` as `flag` (and `short`); `help`, `default` and `choices` replace the
    declaration's for this command only. Returns the spec the command's values are parsed with."""
    if spec.action not in _SHAPES:
        raise ValueError(f"{flag}: a command option cannot be {spec.action!r}")
    overrides: dict[str, object] = {"flag": flag, "ini": None}
    for name, value in (("help", help), ("default", default), ("choices", choices)):
        if value is not _KEEP:
            overrides[name] = value
    own = dataclasses.replace(spec, **overrides)  # type: ignore[arg-type]
    shape = dict(_SHAPES[own.action])
    if own.action != "store_true":
        shape["metavar"] = own.shown_metavar
    parser.add_argument(
        *([short] if short else []),
        flag,
        dest=dest or own.dest,
        help=own.help,
        action=CheckedOption,
        spec=own,
        origin=spec,
        default=own.default,
        required=required,
        **shape,
    )
    return own
