"""One plugin run's machinery that needs no pytest: the question runner, the graph stage, the dry-run
plan, recorded responses lined up with the corpora, and the run's gates. `plugin/` holds the pytest
hooks and nodes that drive it."""
