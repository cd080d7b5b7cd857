"""The history's one error type: a store that cannot be opened, read or written, said plainly."""

from __future__ import annotations

from pytest_graphrag_eval.errors import GraphragEvalError


class HistoryError(GraphragEvalError):
    """A history store problem; messages name the store by its display URL, never with its password."""
