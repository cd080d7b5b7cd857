"""The answer judges a run may choose, apart so the console scripts need not import judge settings."""

JUDGES = ("none", "lexical", "llm")
"""Answer judges, in the order options and errors list them (the one definition)."""
