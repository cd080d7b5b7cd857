"""Comparing a run with a baseline report, and summarising repeated attempts (pure, pytest-free).

The statistics need numpy/scipy (the `[compare]` extra), imported only when a comparison is
computed; without them it is a ConfigurationError. Option defaults live here: reading them imports nothing."""

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
DEFAULT_FLAKY_RUNS = 10
DEFAULT_FLAKY_FLIPS = 2
MAX_WINDOW = 1000  # the most earlier runs a history or trend gate reads
POLICIES = ("all", "any", "majority")  # how repeated attempts of a question decide it
