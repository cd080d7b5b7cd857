"""One run's machinery that needs no pytest; `plugin/` holds the hooks and nodes that drive it."""
