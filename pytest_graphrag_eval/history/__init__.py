"""Run history: every run remembered in SQLite (default) or PostgreSQL, read back for trends and flakes."""
