"""The declared options (`options/declarations.py`) registered with pytest: flags and ini keys."""

from __future__ import annotations

import pytest

from pytest_graphrag_eval.options.declarations import OPTIONS


def add_options(parser: pytest.Parser) -> None:
    """Register every option and ini key under one `graphrag-eval` group; parsing is ours (`parse`),
    so a bad value reads the same from the command line and the ini file."""
    group = parser.getgroup("graphrag-eval", "question-answering regression tests (pytest-graphrag-eval)")
    for spec in OPTIONS:
        takes_value = spec.action in ("store", "append")
        shape = {"default": None, "metavar": spec.shown_metavar} if takes_value else {"default": False}
        group.addoption(spec.flag, dest=spec.dest, help=spec.help, action=spec.action, **shape)
        if spec.ini:
            parser.addini(spec.ini, help=spec.help, type=spec.ini_type)
