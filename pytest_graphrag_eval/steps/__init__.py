"""Rule-based step scoring: matching actual steps to reference steps (docs/steps.md)."""

SCOPES = ("last_group", "all_groups")  # `steps_scope`: which reference step groups are scored
