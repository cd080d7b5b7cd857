"""Running the plugin beside one other pytest plugin, for tests/test_with_*.py.

Each test unblocks the plugin it is about (`-p NAME` after the `-p no:NAME` the conftest puts in
every run it starts, child_pytest.py) and runs a small corpus or the example project through pytester. Live
agents that hang, fail once or answer differently per call are conftest hooks written here.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

ROOT = Path(__file__).resolve().parent.parent
VOLATILE = frozenset({"started_at", "duration_sec", "elapsed_sec"})


def unblocked(*names: str) -> list[str]:
    """`-p NAME` for each plugin a test is about: loaded although the environment blocks it."""
    return [flag for name in names for flag in ("-p", name)]


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def without_volatile(value: Any) -> Any:
    """A report without its timings: what two runs of the same responses share."""
    if isinstance(value, dict):
        return {key: without_volatile(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def results_by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {result["question_id"]: result for result in report["results"]}


# A live agent over plugin_support's corpus: the reference rows for every question, except that
# `BEHAVIOUR` (set by each test) may make a question hang, or answer wrongly on its first call.
# Every call is appended to calls.txt, one question id a line, so a test counts what was asked.
LIVE_AGENT = textwrap.dedent(
    """
    import threading
    from pathlib import Path

    from plugin_support import response

    BEHAVIOUR = {behaviour!r}
    CALLS = Path(__file__).with_name("calls.txt")
    _lock = threading.Lock()


    def pytest_graphrag_respond(question, config):
        with _lock:
            asked = CALLS.read_text().split() if CALLS.exists() else []
            CALLS.write_text("".join(line + "\\n" for line in [*asked, question.question_id]))
        first_call = question.question_id not in asked
        what = BEHAVIOUR.get(question.question_id)
        if what == "hang":
            threading.Event().wait(60)
        if what == "wrong_once" and first_call or what == "always_wrong":
            return response(question.question_id, rows=[["s0", "Nobody"]])
        return response(question.question_id)
    """
)


def live_project(pytester: pytest.Pytester, behaviour: dict[str, str]) -> pytest.Pytester:
    """plugin_support's three-question corpus answered by `LIVE_AGENT` with `behaviour`."""
    write_corpus(pytester, corpus())
    shutil.copy(Path(__file__).with_name("plugin_support.py"), pytester.path / "plugin_support.py")
    pytester.makeconftest(LIVE_AGENT.format(behaviour=behaviour))
    return pytester


def calls(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "calls.txt"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def replay_project(pytester: pytest.Pytester, wrong: tuple[str, ...] = ()) -> pytest.Pytester:
    """plugin_support's corpus with recorded responses; the questions in `wrong` miss a row."""
    write_corpus(pytester, corpus())
    responses = good_responses()
    for index, response in enumerate(responses):
        if response["question_id"] in wrong:
            response["actual_steps"][0]["output"] = json.dumps(
                {"head": {"vars": ["x", "label"]}, "results": {"bindings": []}}
            )
            responses[index] = response
    write_responses(pytester, responses)
    return pytester


REPLAY = ["--graphrag-corpus=corpus.yaml", "--graphrag-responses=responses.jsonl"]
STRICT = ["--graphrag-threshold", "steps_score>=1"]


def example_project(pytester: pytest.Pytester) -> Path:
    """A copy of the example project beside pytester's folder (no reports, caches or history)."""
    target = pytester.path / "example_project"
    shutil.copytree(
        ROOT / "example_project",
        target,
        ignore=shutil.ignore_patterns("reports", "__pycache__", ".graphrag-cache", "history.db*"),
    )
    return target


EXAMPLE_REPLAY = ["example_project", "--graphrag-responses=example_project/recordings/responses.jsonl"]
EXAMPLE_REPORT = Path("example_project/reports/graphrag-report.json")
