"""What a run tells people: the JSON report, terminal summary and failure explanations (no pytest)."""
