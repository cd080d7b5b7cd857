"""The declared options (`options/declarations.py`) registered with pytest: flags and ini keys."""

from __future__ import annotations

import pytest

from pytest_graphrag_eval.options.declarations import OPTIONS


def add_options(parser: pytest.Parser) -> None:
    """Register every option and ini key under one `graphrag-eval` group; parsing is ours (`parse`),
    so a bad value reads the same from the command line and the ini file."""
    group = parser.getgroup("graphrag-eval", "question-answering regression tests (pytest-graphrag-eval)")
    for spec in OPTIONS:
        if spec.action in ("store", "append"):
            group.addoption(
                spec.flag,
                dest=spec.dest,
                help=spec.help,
                action=spec.action,
                default=None,
                metavar=spec.metavar or ("{" + ",".join(spec.choices) + "}" if spec.choices else None),
            )
        else:
            group.addoption(spec.flag, dest=spec.dest, help=spec.help, action=spec.action, default=False)
        if spec.ini:
            parser.addini(spec.ini, help=spec.help, type=spec.ini_type)
