"""Every CI recipe in the docs runs as written, so a recipe cannot drift from working.

A recipe is a YAML block of a page (README.md, docs/*.md) holding GitHub Actions steps with a `run:` that
calls pytest. Each is read with a YAML parser, as GitHub reads it, and its steps are carried out in order;
each `run:` goes to `bash --noprofile --norc -eo pipefail`, as GitHub's default shell does. What a
machine without GitHub cannot do is substituted, always the same way:

- `actions/checkout`: the workspace is prepared beforehand (see `WORKSPACES`); `actions/setup-python`:
  this interpreter, its `bin/` first on PATH; `actions/cache`: nothing to restore.
- `pip install ...`: not run (this environment has the package and the test extras), but the requirement
  must be installable (from git: the package is not on PyPI) and name what the job uses (`pytest-xdist`
  for `-n`, the `[compare]` extra for `--graphrag-baseline`).
- `actions/upload-artifact`: the folder is copied to an artifact store; `gh run download`: main's
  artifact is copied back from it, so a pull request compares with what main's run of the same recipe
  uploaded.
- `${{ ... }}`: evaluated for the event being run (a push to main, or a pull request); secrets are the
  loopback judge's test key, and `OPENAI_BASE_URL` points at the loopback OpenAI-compatible server.
- `$GITHUB_STEP_SUMMARY`: a file, checked afterwards.
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from child_pytest import CHILD_RUN_OPTIONS
from conftest import TEST_API_KEY

from pytest_graphrag_eval.answers.lexical import lexical_counts
from pytest_graphrag_eval.answers.llm_correctness import SYSTEM_MESSAGE as CORRECTNESS_SYSTEM
from pytest_graphrag_eval.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MAIN, PULL_REQUEST = "refs/heads/main", "refs/pull/7/merge"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)


def recipes() -> dict[str, list[dict[str, Any]]]:
    """Every CI recipe of the docs by `page#n` (n counts a page's recipes from 1): its list of steps."""
    found = {}
    for page in PAGES:
        blocks = re.findall(
            r"^```yaml\n(.*?)^```", page.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL
        )
        number = 0
        for block in blocks:
            data = yaml.safe_load(block)
            steps = _steps(data)
            if any("pytest" in str(step.get("run", "")) for step in steps):
                number += 1
                found[f"{page.relative_to(ROOT)}#{number}"] = steps
    return found


def _steps(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list) and all(isinstance(step, dict) for step in data):
        return data  # a fragment: steps to add to a job
    if isinstance(data, dict) and isinstance(data.get("jobs"), dict):
        return [step for job in data["jobs"].values() for step in job.get("steps", [])]
    return []


# The workspaces the recipes run in: what the page tells the reader to have before the job runs.
def _replay_project(path: Path) -> None:
    """The README's and CI page's layout: a corpus and a recording under qa/.

    The ini file names only the answer judge the example corpus's own thresholds need.
    """
    (path / "pytest.ini").write_text("[pytest]\ngraphrag_judge = lexical\n", encoding="utf-8")
    (path / "qa").mkdir()
    shutil.copy(EXAMPLE / "corpus.yaml", path / "qa" / "corpus.yaml")
    shutil.copy(EXAMPLE / "recordings" / "responses.jsonl", path / "qa" / "responses.jsonl")


def _example_project(path: Path) -> None:
    """The example project as it is: its ini file configures corpus, judge, thresholds and gates."""
    shutil.copytree(
        EXAMPLE, path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("reports", "__pycache__")
    )


def _migrated_project(path: Path) -> None:
    """Migration's layout for a live run: its pyproject.toml settings without `graphrag_responses`, a hook.

    The hook and the agent are the example project's; its corpus moves to qa/, without its last template,
    whose one question is marked xfail: the page's `template[*]` gate fails a template in which no
    question succeeded, even an expected failure (a gates question, not a docs one).
    """
    _example_project(path)
    (path / "pytest.ini").unlink()
    (path / "qa").mkdir()
    corpus = yaml.safe_load((path / "corpus.yaml").read_text(encoding="utf-8"))
    assert corpus[-1]["template_id"] == "bidding_zone_with_largest_transformer_capacity"
    (path / "qa" / "corpus.yaml").write_text(yaml.safe_dump(corpus[:-1], sort_keys=False), encoding="utf-8")
    (path / "corpus.yaml").unlink()
    page = (ROOT / "docs" / "migration.md").read_text(encoding="utf-8")
    (settings,) = re.findall(
        r"^```toml\n(\[tool\.pytest\.ini_options\]\n.*?)^```", page, re.MULTILINE | re.DOTALL
    )
    kept = [line for line in settings.splitlines() if not line.startswith("graphrag_responses")]
    kept.append('graphrag_judge = "lexical"')  # the example corpus's own thresholds need an answer judge
    (path / "pyproject.toml").write_text("\n".join(kept) + "\n", encoding="utf-8")


def _pull_request_regresses(path: Path) -> None:
    """The pull request's change: the agent now answers as the example's regression recording."""
    with (path / "pytest.ini").open("a", encoding="utf-8") as ini:
        ini.write("graphrag_responses = recordings/regression.jsonl\n")


@dataclass(frozen=True)
class Event:
    """One run of a recipe: the ref it runs for, a change made before it, what must come out."""

    ref: str
    exit_code: int
    change: Callable[[Path], None] | None = None
    output: tuple[str, ...] = ()  # lines (fnmatch patterns) of the pytest output
    files: tuple[str, ...] = ()  # files the run leaves in the workspace


@dataclass(frozen=True)
class Recipe:
    workspace: Callable[[Path], None]
    events: tuple[Event, ...]
    summary: tuple[str, ...] = field(
        default=()
    )  # text the $GITHUB_STEP_SUMMARY file holds after the last event


RECIPES = {
    "README.md#1": Recipe(
        _replay_project,
        (
            Event(
                MAIN,
                0,
                output=("*PASS  micro:steps_score.mean = * >= 0.9 (cli gate)",),
                files=("reports/graphrag.json", "reports/junit.xml"),
            ),
        ),
    ),
    "docs/ci.md#1": Recipe(
        _replay_project,
        (Event(MAIN, 0, output=("*PASS  micro:steps_score.mean = * >= 0.9 (cli gate)",)),),
    ),
    "docs/ci.md#2": Recipe(
        _example_project,
        (
            Event(MAIN, 0, files=("reports/graphrag.json", "reports/graphrag.html", "reports/junit.xml")),
            Event(
                PULL_REQUEST,
                1,
                change=_pull_request_regresses,
                output=(
                    "*FAIL  micro:regressions = *, required <= 0, cli gate",
                    "*PASS  delta:micro:answer_f1.mean = *, 95% interval * reaches >= -0.02 (cli gate)",
                ),
                files=("baseline/graphrag.json", "reports/graphrag.json", "reports/graphrag.html"),
            ),
        ),
        summary=("### Changes since the baseline", "regressed"),
    ),
    "docs/ci.md#3": Recipe(
        _example_project,
        (Event(MAIN, 0, output=("*PASS  micro:answer_f1.mean = * >= 0.8 (cli gate)",)),),
    ),
    "docs/migration.md#1": Recipe(
        _migrated_project,
        (
            Event(
                PULL_REQUEST,
                0,
                files=("reports/responses.jsonl", "reports/junit.xml", "reports/graphrag.json"),
            ),
        ),
    ),
}


# Recipes with several jobs (a matrix, then a merge job) are not carried out by `Job`, which runs one
# job's steps; their commands are run by the named test instead. Known gap: the matrix text itself.
MULTI_JOB_RECIPES = {"docs/ci.md#4": "tests/test_shards.py (shards run, merged, compared with a baseline)"}


def test_every_recipe_in_the_docs_is_run_here() -> None:
    assert sorted(recipes()) == sorted([*RECIPES, *MULTI_JOB_RECIPES])


class Job:
    """Carries out a recipe's steps for one event, with the substitutions of the module docstring."""

    def __init__(self, workspace: Path, artifacts: Path, judge_url: str, summary: Path):
        self.workspace, self.artifacts, self.summary = workspace, artifacts, summary
        self.env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_STEP_SUMMARY": str(summary),
            "OPENAI_BASE_URL": judge_url,
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.env["PYTEST_ADDOPTS"] = CHILD_RUN_OPTIONS  # none of the outer run's, no unrelated plugin
        self.env.pop("PYTEST_XDIST_WORKER", None)
        self.outputs: list[subprocess.CompletedProcess[str]] = []

    def run(self, steps: list[dict[str, Any]], ref: str) -> None:
        context = {"github.ref": ref, "github.workflow": "qa", "github.token": "gh-test-token"}
        context["secrets.OPENAI_API_KEY"] = TEST_API_KEY
        installs = [step["run"] for step in steps if "pip install" in str(step.get("run", ""))]
        assert len(installs) <= 1, "a recipe installs the package in one step (a fragment may add to a job)"
        for step in steps:
            if "if" in step and not evaluate(str(step["if"]), context):
                continue
            if "uses" in step:
                self._action(step)
            elif "gh run download" in step["run"]:
                self._download(step["run"])
            elif "pip install" in step["run"]:
                check_install(step["run"], [s["run"] for s in steps if "run" in s])
            else:
                env = {key: substitute(str(value), context) for key, value in (step.get("env") or {}).items()}
                script = substitute(step["run"], context)
                completed = subprocess.run(
                    ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                    cwd=self.workspace,
                    env={**self.env, **env},
                    capture_output=True,
                    text=True,
                    timeout=600,
                    check=False,
                )
                self.outputs.append(completed)

    def _action(self, step: Mapping[str, Any]) -> None:
        action = str(step["uses"]).split("@")[0]
        if action == "actions/upload-artifact":
            source = self.workspace / step["with"]["path"]
            if source.exists():
                shutil.copytree(source, self.artifacts / step["with"]["name"], dirs_exist_ok=True)
        else:
            assert action in ("actions/checkout", "actions/setup-python", "actions/cache"), action

    def _download(self, script: str) -> None:
        words = shlex.split(script.split("gh run download", 1)[1].splitlines()[0])
        name, folder = words[words.index("--name") + 1], words[words.index("--dir") + 1]
        assert (self.artifacts / name).is_dir(), f"no artifact {name!r} uploaded by main's run"
        shutil.copytree(self.artifacts / name, self.workspace / folder, dirs_exist_ok=True)


def check_install(command: str, runs: list[str]) -> None:
    """The install step installs what the job uses, from where it can be installed."""
    words = shlex.split(command.split("pip install", 1)[1])
    ours = [word for word in words if word.startswith("pytest-graphrag-eval")]
    assert ours, f"the package is not installed: {command}"
    for requirement in ours:
        assert " @ git+" in requirement, f"not on PyPI: install from git, not {requirement!r}"
    commands = " ".join(runs)
    if re.search(r"(^|\s)-n\s", commands):
        assert "pytest-xdist" in words, f"-n needs pytest-xdist: {command}"
    if "--graphrag-baseline" in commands:
        assert any("[compare]" in requirement for requirement in ours), (
            f"a baseline needs [compare]: {command}"
        )


def substitute(text: str, context: Mapping[str, str]) -> str:
    return EXPRESSION.sub(lambda match: str(evaluate(match.group(1), context)), text)


def evaluate(expression: str, context: Mapping[str, str]) -> Any:
    """The GitHub expressions the recipes use: names, `always()`, `a != 'x'`, and `cond && 'x' || 'y'`."""
    expression = " ".join(expression.split()) if "'" not in expression else expression.strip()
    if expression == "always()":
        return True
    if expression in context:
        return context[expression]
    choice = re.fullmatch(r"(.+?)\s*&&\s*'(.*)'\s*\|\|\s*'(.*)'", expression, re.DOTALL)
    if choice:
        condition, if_true, if_false = choice.groups()
        return if_true if evaluate(condition, context) else if_false
    comparison = re.fullmatch(r"([\w.]+)\s*(==|!=)\s*'([^']*)'", expression)
    if comparison:
        name, operator, literal = comparison.groups()
        return (context[name] == literal) == (operator == "==")
    raise AssertionError(f"teach this test the GitHub expression {expression!r}")


def test_expressions_evaluate_as_github_does() -> None:
    context = {"github.ref": PULL_REQUEST}
    text = "a ${{ github.ref != 'refs/heads/main' && '--x \"y<=0\"' || '' }} b"
    assert substitute(text, context) == 'a --x "y<=0" b'
    assert substitute(text, {"github.ref": MAIN}) == "a  b"
    with pytest.raises(AssertionError, match="teach this test"):
        evaluate("github.event_name == 'push' || true", context)


def test_an_install_from_pypi_or_without_the_compare_extra_is_caught() -> None:
    with pytest.raises(AssertionError, match="not on PyPI"):
        check_install("pip install -e . pytest-graphrag-eval", ["pytest"])
    with pytest.raises(AssertionError, match=r"needs \[compare\]"):
        check_install('pip install "pytest-graphrag-eval @ git+<u>"', ["pytest --graphrag-baseline=b.json"])


def _judge(body: dict[str, Any]) -> str:
    """The LLM judge's correctness verdicts, reasoned as the offline lexical judge reasons."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert system == CORRECTNESS_SYSTEM
    reference, actual = (
        re.findall(rf"<{name}>\n(.*?)\n</{name}>", user, re.DOTALL)[0]
        for name in ("reference_answer", "actual_answer")
    )
    counts = lexical_counts(reference, actual)
    assert counts is not None
    return json.dumps(
        {
            "reference_claims_count": counts.reference,
            "actual_claims_count": counts.actual,
            "matching_claims_count": counts.matching,
            "reason": counts.reason,
        }
    )


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_recipe_runs_as_written(name: str, tmp_path: Path) -> None:
    recipe, steps = RECIPES[name], recipes()[name]
    workspace, artifacts, summary = tmp_path / "workspace", tmp_path / "artifacts", tmp_path / "summary.md"
    workspace.mkdir()
    recipe.workspace(workspace)
    lock = threading.Lock()
    with FakeOpenAIServer(expected_api_key=TEST_API_KEY) as server:

        def judge(body: dict[str, Any]) -> str:
            with lock:
                return _judge(body)

        server.set_chat_handler(judge)
        for event in recipe.events:
            if event.change is not None:
                event.change(workspace)
            shutil.rmtree(workspace / "reports", ignore_errors=True)
            summary.write_text("", encoding="utf-8")  # GitHub creates the step summary file before the step
            job = Job(workspace, artifacts, server.base_url, summary)
            job.run(steps, event.ref)
            (pytest_run,) = [run for run in job.outputs if run.args[-1].lstrip().startswith("pytest")]
            shown = (
                f"{name} ({event.ref}): exit {pytest_run.returncode}\n{pytest_run.stdout}{pytest_run.stderr}"
            )
            assert pytest_run.returncode == event.exit_code, shown
            lines = pytest.LineMatcher(pytest_run.stdout.splitlines())
            lines.fnmatch_lines(list(event.output))
            for file in event.files:
                assert (workspace / file).is_file(), f"{file} missing after {shown}"
        assert not server.handler_errors
    for text in recipe.summary:
        assert text in summary.read_text(encoding="utf-8")
