"""Rule-based step scoring: matching actual steps to reference steps (docs/steps.md).

Nothing is imported here: the corpus loader imports `steps.reference` while the package is still
initialising.
"""
