"""The pytest layer: hooks, options, settings, collection nodes, the background runner."""
