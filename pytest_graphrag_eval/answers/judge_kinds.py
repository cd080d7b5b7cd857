"""The answer judges a run may choose, in a module of their own: the option declarations name them,
and the console scripts that read those declarations need not import the judges' settings."""

JUDGES = ("none", "lexical", "llm")
"""Answer judges, in the order options and errors list them (the one definition)."""
