"""Record graphrag-eval's results on the conformance inputs as JSON fixtures.

graphrag-eval needs Python 3.12, so it is run in its own interpreter, given by
option or environment variable:

    python tests/conformance/record_fixtures.py \\
        --graphrag-eval-python PATH/TO/venv-6.6.1/bin/python \\
        --graphrag-eval-4-python PATH/TO/venv-4.0.0/bin/python

(or GRAPHRAG_EVAL_PYTHON / GRAPHRAG_EVAL_4_PYTHON). Make those environments
with `python3.12 -m venv DIR && DIR/bin/pip install graphrag-eval==6.6.1`
(and `graphrag-eval==4.0.0 --no-deps` for the 4.0 one: its step scoring needs
no dependency). A suite whose interpreter is not given keeps its fixture.
test_graphrag_eval_conformance.py compares the plugin's results with these
fixtures; it needs neither Python 3.12 nor graphrag-eval.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
FIXTURES = HERE / "fixtures"
DRIVER = HERE / "graphrag_eval_driver.py"


@dataclass(frozen=True)
class Suite:
    """One corpus and its responses, scored by one graphrag-eval version."""

    name: str
    corpus: str
    responses: str
    graphrag_eval_version: str
    steps_scope: str  # our steps_scope that has graphrag-eval's group semantics for this version

    @property
    def fixture(self) -> Path:
        return FIXTURES / f"{self.name}.json"


SUITES = (
    Suite("graphrag_eval_6x", "corpus_6x.yaml", "responses_6x.json", "6.6.1", "all_groups"),
    Suite("graphrag_eval_40", "corpus_40.yaml", "responses_40.jsonl", "4.0.0", "last_group"),
)


def read_corpus(suite: Suite) -> list[dict[str, Any]]:
    return yaml.safe_load((INPUTS / suite.corpus).read_text(encoding="utf-8"))


def read_raw_responses(suite: Suite) -> dict[str, Any]:
    """The response records as graphrag-eval receives them: `{question_id: record}`, unvalidated."""
    text = (INPUTS / suite.responses).read_text(encoding="utf-8")
    if suite.responses.endswith(".jsonl"):
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        records = json.loads(text)
    return {record["question_id"]: record for record in records}


def run_driver(python: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Run graphrag_eval_driver.py under `python`; returns its parsed output."""
    completed = subprocess.run(
        [python, str(DRIVER)],
        input=json.dumps({"cases": cases}),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"graphrag-eval driver failed under {python}:\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout)


def record(suite: Suite, python: str) -> None:
    output = run_driver(
        python, [{"key": suite.name, "corpus": read_corpus(suite), "responses": read_raw_responses(suite)}]
    )
    version = output["graphrag_eval_version"]
    if version != suite.graphrag_eval_version:
        raise SystemExit(
            f"{python} has graphrag-eval {version}, {suite.name} needs {suite.graphrag_eval_version}"
        )
    fixture = {
        "graphrag_eval_version": version,
        "corpus": suite.corpus,
        "responses": suite.responses,
        "outcomes": output["outcomes"][suite.name],
    }
    write_atomic(suite.fixture, json.dumps(fixture, indent=1, sort_keys=True) + "\n")
    print(f"{suite.fixture.name}: {len(fixture['outcomes'])} questions (graphrag-eval {version})")


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False) as handle:
        handle.write(text)
    os.chmod(handle.name, 0o644)
    os.replace(handle.name, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphrag-eval-python", default=os.environ.get("GRAPHRAG_EVAL_PYTHON"))
    parser.add_argument("--graphrag-eval-4-python", default=os.environ.get("GRAPHRAG_EVAL_4_PYTHON"))
    args = parser.parse_args(argv)
    interpreters = {"6.6.1": args.graphrag_eval_python, "4.0.0": args.graphrag_eval_4_python}
    if not any(interpreters.values()):
        parser.error("give --graphrag-eval-python (or GRAPHRAG_EVAL_PYTHON) and/or --graphrag-eval-4-python")
    for suite in SUITES:
        python = interpreters[suite.graphrag_eval_version]
        if python:
            record(suite, python)
        else:
            print(f"{suite.fixture.name}: kept (no interpreter for {suite.graphrag_eval_version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
