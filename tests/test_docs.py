"""The README and the documentation pages say what the code does.

The README's three-question example is run as shown and its output compared with what the README and
the First run page print; the generated options tables must be current (links and anchors:
`test_docs_links.py`). The site build itself (strict, links and anchors checked) is `.ci/docs`.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
QUICKSTART = ROOT / "docs" / "examples" / "quickstart"
GETTING_STARTED = ROOT / "docs" / "getting-started.md"
README_SIZE_LIMIT = 12_000  # a 56 KB README was found unreadable; the options table lives on the docs site


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_readme_stays_short() -> None:
    size = len(README.read_bytes())
    assert size < README_SIZE_LIMIT, f"README.md is {size} bytes; move details to a page under docs/"


@pytest.mark.parametrize("script", ["options_table.py", "result_keys_table.py"])
def test_generated_tables_are_current(script: str) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / script), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_readme_shows_the_quickstart_files_as_they_are() -> None:
    text = README.read_text(encoding="utf-8")
    assert (QUICKSTART / "corpus.yaml").read_text(encoding="utf-8") in _blocks(text, "yaml")
    assert (QUICKSTART / "responses.json").read_text(encoding="utf-8") in _blocks(text, "json")


def _quickstart_arguments() -> list[str]:
    """The README's quickstart command, without its activation and `cd` lines and the `pytest` word."""
    blocks = [block for block in _blocks(README.read_text(encoding="utf-8"), "bash") if "quickstart" in block]
    assert len(blocks) == 1
    lines = blocks[0].replace("\\\n", " ").splitlines()
    assert lines[0].startswith(". .venv/bin/activate")  # the README's first command made that environment
    lines = lines[1:]
    assert lines[0] == "cd docs/examples/quickstart"
    words = shlex.split(lines[1])
    assert words[0] == "pytest"
    return words[1:]


def test_quickstart_runs_as_the_readme_and_first_run_page_show(pytester: pytest.Pytester) -> None:
    for name in ("corpus.yaml", "responses.json", "pytest.ini"):
        shutil.copy(QUICKSTART / name, pytester.path / name)
    result = pytester.runpytest(*_quickstart_arguments())
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = {line.rstrip() for line in result.outlines}
    shown = [
        *_blocks(README.read_text(encoding="utf-8"), "text"),
        *_blocks(GETTING_STARTED.read_text(encoding="utf-8"), "text"),
    ]
    assert len(shown) == 3
    for block in shown:
        for line in block.splitlines():
            if line.strip():
                assert line.rstrip() in output, line
    gate = "FAIL  micro:steps_score.mean = 0.666667, required >= 0.9, cli gate"
    assert gate in README.read_text(encoding="utf-8")
    assert any(line.strip() == gate for line in output)


def test_example_regression_prints_what_the_docs_show(pytester: pytest.Pytester, tmp_path: Path) -> None:
    example = ROOT / "example_project"
    result = pytester.runpytest(
        str(example),
        "--graphrag-responses",
        str(example / "recordings" / "regression.jsonl"),
        "--graphrag-report",
        str(tmp_path / "report.json"),
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = {line.rstrip() for line in result.outlines}
    pages = (ROOT / "docs" / "running.md", ROOT / "docs" / "example-project.md", example / "README.md")
    for page in pages:
        blocks = _blocks(page.read_text(encoding="utf-8"), "text")
        assert blocks, page
        for block in blocks:
            if "::" in block.splitlines()[0] and "qa/corpus.yaml" in block:
                continue  # node ids of an imaginary project, not of the example
            for line in block.splitlines():
                if line.strip():
                    assert line.rstrip() in output, f"{page.name}: {line}"
