"""Run history: every run remembered in SQLite (default) or PostgreSQL, read back for trends.

- `store.open_history(url)` -> `HistoryStore` (record_run, runs, resolve, load_report,
  question_outcomes, metric_series, question_results); errors are `errors.HistoryError`;
- `provenance.detect_provenance(environ)`: commit, branch and CI of a run;
- `analysis`: flaky questions and metric trends, pure functions of what the store returns;
- `metrics`: the metric names `trend` and `metric_series` accept.
"""
