"""The docs show example files written out, so they read the same on the site and on the repository host.

`--8<--` include lines (pymdownx.snippets) were expanded by mkdocs but shown as bare include lines when a
page was read on the repository host. Each shown file is now in its page, after a `<!-- file: PATH -->`
marker; `.ci/included_files.py` writes them and its `--check` must pass, so a page never drifts from the
file the tests run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "example_project" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
sys.path.insert(0, str(ROOT / ".ci"))

from included_files import SHOWN, refreshed  # noqa: E402


def test_no_page_includes_a_file_by_an_include_line() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*-{1,2}8<-{1,2}", line)
    ]
    assert not found, f"include lines show as bare text on the repository host: {found}"


def test_every_shown_file_is_written_out_as_it_is() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "included_files.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    shown = {match["path"] for page in PAGES for match in SHOWN.finditer(page.read_text(encoding="utf-8"))}
    assert shown >= {
        "quickstart/corpus.yaml",
        "quickstart/responses.json",
        "live_agents/openai_chat_conftest.py",
        "live_agents/opentelemetry_conftest.py",
    }


def test_a_block_that_drifted_from_its_file_is_rewritten(tmp_path: Path) -> None:
    (tmp_path / "shown.py").write_text("print('new')\n", encoding="utf-8")
    page = "text\n<!-- file: shown.py -->\n<!-- not run: why -->\n```python\nprint('old')\n```\nmore\n"
    assert refreshed(page, tmp_path) == page.replace("print('old')", "print('new')")
