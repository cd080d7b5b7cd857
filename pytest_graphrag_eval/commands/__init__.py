"""Console scripts: one module per command; entry points in pyproject.toml."""

from __future__ import annotations

import argparse
from typing import Any

from pytest_graphrag_eval.options.command_line import add_option, declared


def add_no_cache(parser: argparse.ArgumentParser, **overrides: Any) -> None:
    """`--no-cache`, worded alike in every command that calls the judge."""
    help = "do not read or write the judge cache"
    add_option(parser, "--no-cache", declared("graphrag_no_cache"), help=help, **overrides)
