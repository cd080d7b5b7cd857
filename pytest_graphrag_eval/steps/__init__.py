"""Rule-based step scoring: matching actual steps to reference steps (docs/steps.md)."""
