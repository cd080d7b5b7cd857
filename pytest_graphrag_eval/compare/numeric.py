"""numpy and scipy, imported only when a comparison runs.

They are the optional `compare` extra: a run without a baseline never needs
them, and `import pytest_graphrag_eval` must work without them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Matrix products on the calling thread only, for the bootstrap's.

    They are small (resamples x pairs by a few columns): OpenBLAS's threads took no time off them,
    spun between products, and took the second core from a merge's other process (at 10,000 pairs
    a third of a comparison's CPU time). And on one thread a product's sums do not depend on the
    number of cores, so neither does the last digit of an interval's bound. threadpoolctl comes
    with the `compare` extra; without it BLAS keeps its own threads.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ModuleNotFoundError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
