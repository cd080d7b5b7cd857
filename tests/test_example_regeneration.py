"""Regenerating the example project's data, as its README says, leaves the git tree clean.

Each command of the README's "Regenerate the data" block is run in a copy of the example project
(the scripts write next to themselves), twice; afterwards every file of the copy is byte for byte the
committed one. A generator that writes a timestamp, a measured time or a random id fails here.
"""

from __future__ import annotations

import filecmp
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
# The block's programs, run by this interpreter (the console script as the module it calls).
COMMANDS = {
    "python": [sys.executable],
    "graphrag-eval-corpus": [sys.executable, "-m", "pytest_graphrag_eval.commands.corpus"],
}
IGNORED = ("__pycache__", "reports", ".graphrag-cache", ".pytest_cache")


def regeneration_commands() -> list[list[str]]:
    """The argument lists of the README's regeneration block (`python example_project/scripts/...`,
    `graphrag-eval-corpus generate ...`)."""
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    section = text.split("## Regenerate the data", 1)[1]
    block = re.search(r"^```bash\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert block is not None
    commands = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    return [words for words in commands if words]


def differing_files(left: Path, right: Path) -> list[str]:
    """Files that differ, or exist on one side only, between two folders (recursively)."""
    comparison = filecmp.dircmp(left, right, ignore=list(IGNORED))
    found = [*comparison.left_only, *comparison.right_only]
    _, mismatch, errors = filecmp.cmpfiles(left, right, comparison.common_files, shallow=False)
    found += mismatch + errors
    for name in comparison.common_dirs:
        found += [f"{name}/{inner}" for inner in differing_files(left / name, right / name)]
    return sorted(found)


@pytest.mark.slow
def test_regenerating_the_example_data_twice_reproduces_the_committed_files(tmp_path: Path) -> None:
    commands = regeneration_commands()
    assert {words[1] for words in commands} >= {
        "example_project/scripts/build_graph.py",
        "generate",
        "example_project/scripts/record.py",
    }
    shutil.copytree(EXAMPLE, tmp_path / "example_project", ignore=shutil.ignore_patterns(*IGNORED))
    for _ in range(2):
        for words in commands:
            assert words[0] in COMMANDS
            done = subprocess.run(
                [*COMMANDS[words[0]], *words[1:]], cwd=tmp_path, capture_output=True, text=True, check=False
            )
            assert done.returncode == 0, f"{shlex.join(words)}:\n{done.stderr}"
        assert differing_files(EXAMPLE, tmp_path / "example_project") == []


def test_the_comparison_sees_a_changed_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deep").mkdir()
    (tmp_path / "a" / "deep" / "f.txt").write_text("1", encoding="utf-8")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert differing_files(tmp_path / "a", tmp_path / "b") == []
    (tmp_path / "b" / "deep" / "f.txt").write_text("2", encoding="utf-8")
    assert differing_files(tmp_path / "a", tmp_path / "b") == ["deep/f.txt"]
