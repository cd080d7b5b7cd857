"""Write the contents of docs/examples/ files into the pages that show them.

The pages used to include those files with `--8<--` lines (pymdownx.snippets), which mkdocs expands but
the repository host shows as bare include lines. Each shown file is now written out in its page: a
`<!-- file: PATH -->` comment (PATH under docs/examples/) marks the fenced block that holds it, with
any other comment lines in between. `--check` changes nothing and exits 1 when a block differs from
its file, so CI catches an example edited without its page.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from generated_block import ROOT, _write_atomically

EXAMPLES = ROOT / "docs" / "examples"
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SHOWN = re.compile(
    r"^<!-- file: (?P<path>\S+) -->\n(?P<between>(?:<!--.*?-->\n)*)```(?P<lang>\w*)\n(?P<body>.*?)^```",
    re.MULTILINE | re.DOTALL,
)


def refreshed(text: str, examples: Path = EXAMPLES) -> str:
    """`text` with every marked block holding its file's current content."""

    def block(match: re.Match[str]) -> str:
        content = (examples / match["path"]).read_text(encoding="utf-8")
        if not content.endswith("\n"):
            content += "\n"
        return f"<!-- file: {match['path']} -->\n{match['between']}```{match['lang']}\n{content}```"

    return SHOWN.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale blocks instead of writing")
    check = parser.parse_args(argv).check
    stale = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = refreshed(text)
        if new != text:
            stale.append(str(page.relative_to(ROOT)))
            if not check:
                _write_atomically(page, new)
    if check and stale:
        print(f"shown example files out of date in {', '.join(stale)}; run: python .ci/included_files.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
