"""Per-question thresholds and suite-level gates over one expression grammar (no pytest)."""
