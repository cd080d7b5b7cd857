"""Run history: every run remembered in SQLite (default) or PostgreSQL, read back for trends.

- `store.open_history(url)` -> `HistoryStore` (record_run, runs, resolve, load_report,
  question_outcomes, metric_series, question_results, waiting_shards); errors are `errors.HistoryError`;
- `recording.record_finished_run`: what the plugin and graphrag-eval-merge call at the end of a run
  (a history that cannot be written becomes a line, never an exception);
- `records`: what a JSON report is stored as (identities, outcome codes, question rows);
- `schema` and `backends`: the versioned schema and the SQLite / PostgreSQL connections;
- `provenance.detect_provenance(environ)`: commit, branch and CI of a run;
- `analysis`: flaky questions and metric trends, pure functions of what the store returns;
- `metrics`: the metric names `trend` and `metric_series` accept.
"""
