"""Every `pytest example_project ...` command in the docs runs as written, from the repository's root,
twice in a row with the same counts (the second run finds the first one's outputs in place).

The commands are read from the shell blocks of README.md, example_project/README.md and docs/*.md, in
page order, and run in a workspace laid out as the repository's root (a copy of the example project and
of pyproject.toml), so nothing is written into the repository; a command comparing with `good.json`
first runs the documented command that writes it, if that has not run yet. A command
with `--graphrag-judge llm` gets the loopback OpenAI-compatible server as its endpoint (what the
`export OPENAI_API_KEY=...` line beside it stands for), whose judge reasons as the offline lexical judge.
Commands about a project of the reader's own (`qa/...`) are run by the CI recipes' test where they form
a job (`test_docs_ci_recipes.py`); the quickstart command by `test_docs.py`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import scripted_judge
from child_pytest import CHILD_RUN_OPTIONS
from conftest import TEST_API_KEY

from pytest_graphrag_eval.answers.lexical import lexical_counts
from pytest_graphrag_eval.answers.llm_correctness import SYSTEM_MESSAGE as CORRECTNESS_SYSTEM
from pytest_graphrag_eval.answers.relevance import SYSTEM_MESSAGE as RELEVANCE_SYSTEM
from pytest_graphrag_eval.testing import FakeOpenAIServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "example_project" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def example_commands() -> list[str]:
    """Each distinct `pytest example_project` command of the docs' shell blocks, in page order."""
    commands: list[str] = []
    for page in PAGES:
        for block in re.findall(
            r"^```bash\n(.*?)^```", page.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL
        ):
            for line in block.replace("\\\n", " ").splitlines():
                command = shlex.join(shlex.split(line, comments=True))  # comments dropped, quoting kept
                if command.startswith("pytest example_project") and command not in commands:
                    commands.append(command)
    return commands


COMMANDS = example_commands()


def _judge(body: dict[str, Any]) -> str:
    """Correctness reasoned as the lexical judge; relevance as the scripted judge of the differential test."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]

    def block(name: str) -> str:
        return re.findall(rf"<{name}>\n(.*?)\n</{name}>", user, re.DOTALL)[0]

    if system == RELEVANCE_SYSTEM:
        return json.dumps(scripted_judge.generated_question(block("actual_answer")))
    assert system == CORRECTNESS_SYSTEM
    counts = lexical_counts(block("reference_answer"), block("actual_answer"))
    assert counts is not None
    return json.dumps(
        {
            "reference_claims_count": counts.reference,
            "actual_claims_count": counts.actual,
            "matching_claims_count": counts.matching,
            "reason": counts.reason,
        }
    )


def test_the_docs_show_the_example_commands() -> None:
    assert len(COMMANDS) >= 6
    assert any("--graphrag-baseline" in command for command in COMMANDS)
    assert any("--graphrag-judge llm" in command for command in COMMANDS)


# The docs write a path option whose value lies outside example_project/ with `=`, as docs/errors.md advises.
# Written after a space, such a value (the first run's report, a baseline) looks like a test path to pytest,
# which then takes the repository's pyproject.toml for its config file and would collect 0 items. Each such
# variant must either work or stop, on both runs, with the usage error that names the `=` form
# (plugin/detached_paths.py).
OUTSIDE_PATH_OPTION = re.compile(r"(--graphrag-(?:html|report|baseline|markdown))=(?!example_project/)")
SPACED_VARIANTS = [
    pytest.param(OUTSIDE_PATH_OPTION.sub(r"\1 ", command), id=_id)
    for command in COMMANDS
    if OUTSIDE_PATH_OPTION.search(command)
    for _id in ["spaced: " + command.removeprefix("pytest example_project").strip()]
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A copy of the example project beside the repository's pyproject.toml (its root, as the docs say),
    and the loopback judge the commands with `--graphrag-judge llm` reach."""
    root = tmp_path_factory.mktemp("docs-commands")
    shutil.copytree(
        ROOT / "example_project",
        root / "example_project",
        ignore=shutil.ignore_patterns("reports", "__pycache__", ".graphrag-cache"),
    )
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "OPENAI_API_KEY": TEST_API_KEY,
    }
    env["PYTEST_ADDOPTS"] = CHILD_RUN_OPTIONS  # none of the outer run's, no unrelated plugin
    lock = threading.Lock()
    with FakeOpenAIServer(expected_api_key=TEST_API_KEY) as server:

        def judge(body: dict[str, Any]) -> str:
            with lock:
                return _judge(body)

        server.set_chat_handler(judge)
        env["OPENAI_BASE_URL"] = server.base_url
        yield root, env
        assert not server.handler_errors


def _run(command: str, root: Path, env: dict[str, str]) -> dict[str, int]:
    """Run one command as written; the counts of its final line (`3 failed, 22 passed`)."""
    return _counts(command, _completed(command, root, env))


def _counts(command: str, completed: subprocess.CompletedProcess[str]) -> dict[str, int]:
    output = completed.stdout + completed.stderr
    ran = re.search(r"collected 25 items", output) and re.search(r"\d+ passed", output)
    # 0: all held; 1: the regression recording fails on purpose, as the docs say.
    assert completed.returncode in (0, 1) and ran and "Traceback" not in output, (
        f"{command}: exit {completed.returncode}\n{output[-2500:]}"
    )
    final = [line for line in output.splitlines() if re.search(r"\d+ passed.* in [\d.]+s", line)][-1]
    return {word: int(count) for count, word in re.findall(r"(\d+) (\w+)(?=[,\s])", final.split(" in ")[0])}


def _completed(command: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", f"{command} -p no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _inputs_of(command: str, root: Path, env: dict[str, str]) -> None:
    """Run the documented command that writes a file this one reads, when it has not run yet."""
    for wanted in re.findall(r"--graphrag-baseline[= ](\S+)", command):
        if not (root / wanted).exists():
            [writer] = [other for other in COMMANDS if f"--graphrag-report={wanted}" in other]
            _run(writer, root, env)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(command, id=command.removeprefix("pytest example_project").strip() or "plain")
        for command in COMMANDS
    ],
)
def test_example_command_runs_twice_in_a_row_with_the_same_counts(
    command: str, workspace: tuple[Path, dict[str, str]]
) -> None:
    """A reader runs a command again (after an edit, to look again): its own outputs from the first run
    must not change what the second one collects or decides."""
    root, env = workspace
    _inputs_of(command, root, env)
    first = _run(command, root, env)
    second = _run(command, root, env)
    assert second == first, f"{command}: first run {first}, second run {second}"


@pytest.mark.parametrize("command", SPACED_VARIANTS)
def test_a_path_option_written_after_a_space_works_twice_or_says_how_to_write_it(
    command: str, workspace: tuple[Path, dict[str, str]]
) -> None:
    """Both runs alike: the same counts, or the same usage error naming the `=` form (not a first run that
    works and a second that collects nothing)."""
    root, env = workspace
    _inputs_of(command, root, env)
    outcomes: list[object] = []
    for _ in range(2):
        completed = _completed(command, root, env)
        output = completed.stdout + completed.stderr
        if completed.returncode == pytest.ExitCode.USAGE_ERROR and re.search(
            r"Write the option with '=': --graphrag-(html|report|baseline|markdown)=", output
        ):
            outcomes.append("usage error naming the '=' form")
        else:
            outcomes.append(_counts(command, completed))
    assert outcomes[0] == outcomes[1], f"{command}: {outcomes}"
