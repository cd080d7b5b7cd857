"""Concurrent writers: two processes recording into one SQLite file, two shards into one PostgreSQL history.

Each writer is its own process calling `record_finished_run` (what the plugin and the merge call),
started together on a store that does not exist yet, so the schema's creation races too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from history_support import run_report

from pytest_graphrag_eval.history.store import open_history

WRITER = """
import json, sys
from pytest_graphrag_eval.run.run_history import record_finished_run
url, reports = sys.argv[1], json.load(open(sys.argv[2]))
for key, report in reports:
    outcome = record_finished_run(url, report, run_key=key, environ={})
    print(json.dumps([outcome.recorded, outcome.line]), flush=True)
"""


def _writers(url: str, batches: list[list[tuple[str, dict]]], folder: Path) -> list[list[list]]:
    processes = []
    for number, batch in enumerate(batches):
        path = folder / f"batch-{number}.json"
        path.write_text(json.dumps(batch))
        processes.append(
            subprocess.Popen(
                [sys.executable, "-c", WRITER, url, str(path)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert "Traceback" not in err and "locked" not in err, err
        outputs.append([json.loads(line) for line in out.splitlines()])
    return outputs


def test_two_runs_writing_one_sqlite_file_at_once_are_all_recorded(tmp_path: Path) -> None:
    url = str(tmp_path / "shared.db")
    batches = [
        [
            (f"{writer}-{night}", run_report(night, questions=300, failing=[f"q{night:05d}"]))
            for night in range(12)
        ]
        for writer in ("ci-a", "ci-b")
    ]
    outputs = _writers(url, batches, tmp_path)
    for output in outputs:
        assert [recorded for recorded, _ in output] == [True] * 12, output
    with open_history(url) as store:
        runs = store.runs()
        assert sorted(run.run_key for run in runs) == sorted(key for batch in batches for key, _ in batch)
        assert all(run.questions == 300 and run.failed == 1 for run in runs)
        assert len(store.question_outcomes(last_n=100).runs) == 24


def test_two_shards_writing_one_postgresql_history_at_once_make_whole_runs(
    tmp_path: Path, postgres_url: str
) -> None:
    keys = [f"pipeline-{number}" for number in range(10)]
    batches = [
        [
            (key, run_report(number, questions=200, failing=["q00003"], shard=(shard, 2)))
            for number, key in enumerate(keys)
        ]
        for shard in (1, 2)
    ]
    outputs = _writers(postgres_url, batches, tmp_path)
    lines = [line for output in outputs for recorded, line in output if recorded]
    assert len(lines) == 20
    # each run was completed by exactly one of its two shards, whichever came second
    assert sum("recorded run" in line for line in lines) == 10
    with open_history(postgres_url) as store:
        runs = store.runs()
        assert sorted(run.run_key for run in runs) == sorted(keys)
        assert all((run.questions, run.failed) == (200, 1) for run in runs)
        merged = store.load_report("pipeline-3")
        assert [r["question_id"] for r in merged["results"]] == [f"q{n:05d}" for n in range(200)]
