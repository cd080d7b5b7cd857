"""Console scripts: one module per command; entry points in pyproject.toml."""
