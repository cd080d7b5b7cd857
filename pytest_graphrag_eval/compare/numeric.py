"""numpy and scipy (the optional `compare` extra), imported only when a comparison runs."""

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
        from scipy import special
    except ModuleNotFoundError:
        raise ConfigurationError(_HINT) from None
    return special  # type: ignore[no-any-return]


def require_statistics() -> None:
    """Raise the install hint now if numpy or scipy is missing (before a run that will need them)."""
    numpy()
    scipy_special()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Matrix products on the calling thread only: the bootstrap's are small, OpenBLAS's threads only
    took the other core, and one thread makes an interval's last digit independent of the core count."""
    try:
        from threadpoolctl import threadpool_limits
    except ModuleNotFoundError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
