"""Run history: every run remembered in SQLite (default) or PostgreSQL, read back for trends.

- `store.open_history(url)` -> `HistoryStore` (record_run, runs, resolve, load_report,
  question_outcomes, metric_series, question_results, waiting_shards); errors are `errors.HistoryError`;
- shard reports wait in the store until their run is complete; the recorder passes the merge
  (`run.merge.merge_shard_reports`: the run layer's, above this one) and `run.recording` records
  a finished run for the plugin and graphrag-eval-merge;
- `records`: what a JSON report is stored as (identities, outcome codes, question rows);
- `schema` and `backends`: the versioned schema and the SQLite / PostgreSQL connections;
- `provenance.detect_provenance(environ)`: commit, branch and CI of a run;
- `analysis`: flaky questions and metric trends, pure functions of what the store returns;
- `metrics`: the metric names `trend` and `metric_series` accept.
"""
