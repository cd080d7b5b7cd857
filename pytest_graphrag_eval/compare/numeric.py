"""numpy and scipy, imported only when a comparison runs.

They are the optional `compare` extra: a run without a baseline never needs
them, and `import pytest_graphrag_eval` must work without them.
"""

from __future__ import annotations

from types import ModuleType

from pytest_graphrag_eval.errors import ConfigurationError, install_extra_hint

_HINT = f"comparing against a baseline needs numpy and scipy: {install_extra_hint('compare')}"


def numpy() -> ModuleType:
    try:
        import numpy as np
    except ModuleNotFoundError:
        raise ConfigurationError(_HINT) from None
    return np


def scipy_special() -> ModuleType:
    """scipy.special: its ufuncs (stdtrit, betaincinv, bdtr) take microseconds, scipy.stats milliseconds."""
    try:
        from scipy import special  # type: ignore[import-untyped]
    except ModuleNotFoundError:
        raise ConfigurationError(_HINT) from None
    module: ModuleType = special
    return module


def require_statistics() -> None:
    """Raise the install hint now if numpy or scipy is missing (before a run that will need them)."""
    numpy()
    scipy_special()
