"""The console scripts' options, built from the same declarations as the plugin's.

A command names a declared setting (`OPTION_BY_DEST`) under its own short flag (`--flaky-runs` for
`--graphrag-flaky-runs`) and gets its parser, range, default and message: a value the plugin
refuses, the command refuses in the same words, as an argparse usage error (exit status 2, the
command's usage line, no traceback). An option only a command has (`--limit`) is declared where the
command is, as an `OptionSpec` with one of the same parsers. pytest-benchmark builds its command
line from its plugin's option functions the same way.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import Any

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.options.declarations import OPTION_BY_DEST, OptionSpec
from pytest_graphrag_eval.options.parsers import RawValue

_KEEP: Any = object()
"""An override left out: the declaration's own value stands."""


class CheckedOption(argparse.Action):
    """Stores the value its `spec` parses; a value the parser refuses is the parser's usage error.

    `spec` is the command's own (its flag, its help); `origin` the declaration it was made from."""

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
        raw: RawValue = True if self.nargs == 0 else str(values)
        try:
            setattr(namespace, self.dest, self.spec.parse_layer(raw, "cli"))
        except ConfigurationError as error:
            parser.error(str(error))  # exits 2 after the (sub)command's usage line


def declared(dest: str) -> OptionSpec:
    """The plugin's declaration of a setting, by its `dest` (`graphrag_flaky_runs`)."""
    return OPTION_BY_DEST[dest]


def add_option(
    parser: argparse.ArgumentParser,
    flag: str,
    spec: OptionSpec,
    *,
    dest: str | None = None,
    help: str = _KEEP,
    default: object = _KEEP,
    choices: tuple[str, ...] | None = _KEEP,
    required: bool = False,
) -> OptionSpec:
    """Add `spec` to `parser` as `flag` (its messages name `flag`), storing into `dest` (default: the
    flag's name); `help`, `default` and `choices` replace the declaration's for this command only.
    Returns the command's own spec, the one its values are parsed with."""
    if spec.action not in ("store", "store_true"):
        raise ValueError(f"{flag}: a command option stores one value or is a flag, not {spec.action!r}")
    overrides: dict[str, object] = {
        "flag": flag,
        "dest": dest or flag.lstrip("-").replace("-", "_"),
        "ini": None,
    }
    for name, value in (("help", help), ("default", default), ("choices", choices)):
        if value is not _KEEP:
            overrides[name] = value
    own = dataclasses.replace(spec, **overrides)  # type: ignore[arg-type]
    shape: dict[str, Any] = (
        {"nargs": 0}
        if own.action == "store_true"
        else {"metavar": own.metavar or ("{" + ",".join(own.choices) + "}" if own.choices else None)}
    )
    parser.add_argument(
        flag,
        dest=own.dest,
        help=own.help,
        action=CheckedOption,
        spec=own,
        origin=spec,
        default=own.default,
        **shape,
    )
    return own
