"""Comparing a run with a baseline report, and summarising repeated attempts (pure, pytest-free).

The statistics need numpy/scipy (the `[compare]` extra), imported only when a comparison is
computed; without them it is a ConfigurationError.
"""
