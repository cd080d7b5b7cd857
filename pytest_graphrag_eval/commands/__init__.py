"""Console scripts: one module per command; entry points in pyproject.toml."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.errors import CommandError
from pytest_graphrag_eval.options.command_line import add_option, declared
from pytest_graphrag_eval.options.declarations import OptionSpec

Argument = (
    tuple[str, OptionSpec | str | None, str | None]
    | tuple[str, OptionSpec | str | None, str | None, dict[str, Any]]
)
"""A command's argument as data: (name, spec, help[, keywords]). With a spec (an `OptionSpec`, or the dest
of a declared setting), an option added by `add_option`, the keywords overriding the declaration;
with None, a plain argparse positional."""


def add_arguments(parser: argparse.ArgumentParser, arguments: Iterable[Argument]) -> None:
    """Add the arguments in order, so a command's whole interface reads as one table."""
    for name, spec, help, *keywords in arguments:
        extra = keywords[0] if keywords else {}
        if spec is None:
            parser.add_argument(name, help=help, **extra)
        else:
            own = spec if isinstance(spec, OptionSpec) else declared(spec)
            add_option(parser, name, own, help=own.help if help is None else help, **extra)


def check_outputs(
    outputs: Iterable[tuple[str, Path | None]], inputs: Iterable[tuple[str, Path | None]] = ()
) -> None:
    """Refuse an output that is a folder, a file the command reads (the history, a shard) or another output's
    file, before anything is judged or written."""
    given = [(flag, path) for flag, path in outputs if path is not None]
    read = {path.resolve(): f"is {name}, which this command reads" for name, path in inputs if path}
    for flag, path in given:
        if path.is_dir() or path.resolve() in read:
            raise CommandError(f"{flag} {path}: {read.get(path.resolve(), 'is a folder')}; give a file name")
    if len({path.resolve() for _, path in given}) < len(given):
        raise CommandError(
            f"{', '.join(flag for flag, _ in given)}: two of them name one file; give each its own"
        )


def add_no_cache(parser: argparse.ArgumentParser, **overrides: Any) -> None:
    """`--no-cache`, worded alike in every command that calls the judge."""
    help = "do not read or write the judge cache"
    add_option(parser, "--no-cache", declared("graphrag_no_cache"), help=help, **overrides)
