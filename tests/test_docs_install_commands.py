"""The install commands the docs and messages show work as written for a reader with a fresh clone.

Two ways they failed: a page made a virtual environment with `python3 -m venv .venv` and installed with
`.venv/bin/pip`, then ran bare `pytest` ("command not found": the environment was never activated); and
`pip install 'pytest-graphrag-eval[extra]'` names the package on PyPI, where it is not published. The
shell blocks of every page are read in order as a shell would run them; the messages come from the
package's source, where the hint for an optional extra is built in one place (`errors.install_extra_hint`).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pytest_graphrag_eval.errors import install_extra_hint

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "example_project" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = sorted((ROOT / "pytest_graphrag_eval").rglob("*.py"))
ENVIRONMENT_PROGRAMS = {"pytest", "pip", "mkdocs", "graphrag-eval-merge", "graphrag-eval-history"}
PACKAGE = "pytest-graphrag-eval"


def _shell_commands(page: Path) -> list[list[str]]:
    """The simple commands of a page's shell blocks, in order, as word lists (comments dropped)."""
    commands: list[list[str]] = []
    text = page.read_text(encoding="utf-8")
    for block in re.findall(r"^```(?:bash|sh|shell)\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            command: list[str] = []
            for word in [*words, "&&"]:
                if word in ("&&", "||", ";", "|"):
                    if command:
                        commands.append(command)
                    command = []
                else:
                    command.append(word)
    return commands


def unactivated_environment_commands(page: Path) -> list[str]:
    """Bare environment programs run after the page made a virtual environment it never activated.

    A `git clone` starts a reader's new checkout (the environment of an earlier block is not theirs)."""
    problems: list[str] = []
    created: str | None = None
    for words in _shell_commands(page):
        if words[0] == "git" and words[1:2] == ["clone"]:
            created = None
        elif words[0].startswith("python") and words[1:3] == ["-m", "venv"]:
            created = words[-1]
        elif (
            words[0] in (".", "source") and created and words[1:2] == [f"{created.rstrip('/')}/bin/activate"]
        ):
            created = None  # active from here on: bare programs are the environment's
        elif created and words[0] in ENVIRONMENT_PROGRAMS:
            shown = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
            problems.append(f"{shown}: `{shlex.join(words)}` after `python3 -m venv {created}`")
    return problems


def test_no_page_runs_bare_programs_of_an_environment_it_did_not_activate() -> None:
    problems = [problem for page in PAGES for problem in unactivated_environment_commands(page)]
    assert not problems, "\n".join(problems)


def test_the_checker_sees_a_bare_pytest_after_an_unactivated_environment(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\npython3 -m venv .venv\n.venv/bin/pip install -e .\n```\n\n```bash\npytest -q\n```\n",
        encoding="utf-8",
    )
    assert unactivated_environment_commands(page) == ["page.md: `pytest -q` after `python3 -m venv .venv`"]
    page.write_text(page.read_text(encoding="utf-8").replace(".venv/bin/pip", ". .venv/bin/activate\npip"))
    assert unactivated_environment_commands(page) == []


def pypi_installs(text: str) -> list[str]:
    """`pip install` commands naming the package as if it were on PyPI (no path, no `@ git+...`)."""
    found = []
    for match in re.finditer(r"pip install([^`\n]*)", text):
        words = match.group(1).replace("'", " ").replace('"', " ").split()
        for index, word in enumerate(words):
            if re.fullmatch(rf"{PACKAGE}(\[[\w,-]+\])?", word) and words[index + 1 : index + 2] != ["@"]:
                found.append(match.group(0).strip())
    return found


@pytest.mark.parametrize("path", [*PAGES, *SOURCES], ids=lambda path: str(path.relative_to(ROOT)))
def test_no_page_or_message_installs_the_package_from_pypi(path: Path) -> None:
    assert pypi_installs(path.read_text(encoding="utf-8")) == []


def test_the_extra_hint_installs_from_a_clone_and_the_checker_sees_pypi_installs() -> None:
    hint = install_extra_hint("ragas")
    assert pypi_installs(hint) == [] and f"-e 'path/to/{PACKAGE}[ragas]'" in hint
    assert pypi_installs("""run `pip install "pytest-graphrag-eval[ragas]"` first""") != []
    assert pypi_installs("pip install 'pytest-graphrag-eval[compare] @ git+<repository URL>'") == []
