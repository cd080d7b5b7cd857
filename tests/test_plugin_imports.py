"""Runs that configure no judge never import the LLM stack (openai costs ~0.7 s per process and worker)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

LLM_STACK = ("openai", "httpx", "ragas")

MODULES_CONFTEST = """
import json, os, sys

def pytest_sessionfinish(session):
    role = "worker" if hasattr(session.config, "workerinput") else "main"
    with open(f"modules-{role}-{os.getpid()}.json", "w") as handle:
        json.dump(sorted(sys.modules), handle)
"""


def llm_modules(modules: list[str]) -> list[str]:
    return [name for name in modules if name.split(".")[0] in LLM_STACK]


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["plain", "xdist"])
def test_steps_only_replay_imports_no_llm_module(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    # Other installed plugins (langsmith, ...) import HTTP clients themselves: load only ours.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(MODULES_CONFTEST)
    result = pytester.runpytest_subprocess(
        "-p",
        "pytest_graphrag_eval.plugin.hooks",
        *workers,
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
    )
    result.assert_outcomes(passed=3)
    dumps = sorted(pytester.path.glob("modules-*.json"))
    assert len(dumps) == (3 if workers else 1), "one module list per process"
    for dump in dumps:
        modules = json.loads(dump.read_text())
        if "worker" in dump.name or not workers:  # an xdist controller scores nothing
            assert "pytest_graphrag_eval.steps.scorer" in modules, f"{dump.name}: the steps scorer ran"
        assert llm_modules(modules) == [], f"{dump.name} imported the LLM stack"


def test_importing_the_package_imports_no_llm_module() -> None:
    """The package root loads its public names on first use; using the library's entry points
    still loads no LLM module."""
    script = (
        "import json, sys, pytest_graphrag_eval as package; package.run_evaluation; package.load_responses; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    modules = json.loads(
        subprocess.run([sys.executable, "-c", script], check=True, capture_output=True).stdout
    )
    assert "pytest_graphrag_eval.evaluation" in modules
    assert llm_modules(modules) == []


def test_the_judge_client_still_loads_on_first_use() -> None:
    script = (
        "import json, sys, pytest_graphrag_eval.llm as llm; before = 'openai' in sys.modules; "
        "client = llm.JudgeClient; print(json.dumps([before, 'openai' in sys.modules, client.__module__]))"
    )
    output = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True).stdout
    assert json.loads(output) == [False, True, "pytest_graphrag_eval.llm.client"]
