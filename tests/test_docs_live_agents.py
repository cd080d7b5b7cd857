"""Each conftest.py of the live-agents page, run as shown against the example project.

`my_agent` is the example's grid agent speaking the page's framework (tests/trace_agents.py builds
the framework's real objects); the report must equal the replay of the example's recording, so
each three-line hook hands the plugin exactly what the agent did.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from trace_agents import EXAMPLE

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples" / "live_agents"
PAGE = ROOT / "docs" / "live-agents.md"
TESTS = Path(__file__).resolve().parent
VOLATILE = frozenset({"elapsed_sec"})

SHIM_HEADER = f"""
import sys
from pathlib import Path

sys.path.insert(0, {str(TESTS)!r})
from trace_agents import TRACES, FrameworkAgent, OtelAgent, grid_agent

from pytest_graphrag_eval import load_corpus

# Step ids derive from the question id, as in the recording; a real agent's would be its own.
CORPUS = load_corpus(Path(__file__).with_name("corpus.yaml"))
IDS = {{question.question_text: question.question_id for question in CORPUS.questions()}}
AGENT = grid_agent()
"""
SHIMS = {
    "openai_chat": """
def run_agent(text):
    return FrameworkAgent(AGENT, TRACES["openai-messages"]).run(IDS[text], text)[0]
""",
    "openai_responses": """
def run_agent(text):
    return FrameworkAgent(AGENT, TRACES["openai-responses"]).run(IDS[text], text)[0]
""",
    "langgraph": """
class Graph:
    async def ainvoke(self, state):
        (role, text), = state["messages"]
        return {"messages": FrameworkAgent(AGENT, TRACES["langchain-messages"]).run(IDS[text], text)[0]}

graph = Graph()
""",
    "opentelemetry": """
from opentelemetry import trace

def run_agent(text):
    OtelAgent(AGENT, trace.get_tracer("my_agent"), question_attribute=None).run(IDS[text], text)
""",
}


def without_volatile(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in result.items() if key not in VOLATILE} for result in results]


def run(pytester: pytest.Pytester, *args: str, subprocess: bool = False) -> dict[str, Any]:
    run_pytest = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    result = run_pytest("--graphrag-report", "report.json", "-p", "no:cacheprovider", *args)
    assert result.ret == 0, result.stdout.str()
    return json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", list(SHIMS))
def test_live_agent_conftest_reports_like_the_recording(pytester: pytest.Pytester, name: str) -> None:
    for file in ("corpus.yaml", "pytest.ini"):
        shutil.copy(EXAMPLE / file, pytester.path / file)
    shutil.copy(EXAMPLE / "recordings" / "responses.jsonl", pytester.path / "recorded.jsonl")
    (pytester.path / "my_agent.py").write_text(SHIM_HEADER + SHIMS[name], encoding="utf-8")
    expected = without_volatile(run(pytester, "--graphrag-responses", "recorded.jsonl")["results"])
    conftest = (EXAMPLES / f"{name}_conftest.py").read_text(encoding="utf-8")
    pytester.makeconftest(conftest)
    # The OpenTelemetry hook sets the process' global tracer provider: a process of its own.
    actual = without_volatile(run(pytester, subprocess=name == "opentelemetry")["results"])
    agent_error = "largest-capacity-zone"  # the agent gives up: the hook raises, the plugin keeps the reason
    assert [r for r in actual if r["question_id"] != agent_error] == [
        r for r in expected if r["question_id"] != agent_error
    ]
    (failed,) = [r for r in actual if r["question_id"] == agent_error]
    assert failed["status"] == "error"
    assert "no plan for this question" in failed["error"]


def test_the_page_shows_every_conftest() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for name in SHIMS:
        shown = f"<!-- file: live_agents/{name}_conftest.py -->"
        assert shown in page  # its content is held equal to the file by tests/test_docs_included_files.py
