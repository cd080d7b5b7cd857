"""Keep a generated Markdown block, between two marker comments, in step with the code it is made from.

Shared by the docs generators (options_table.py, result_keys_table.py): `main` rewrites the block in
each target file, or with `--check` changes nothing and exits 1 when a block is stale, so CI catches
code changed without regenerating its docs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def updated(text: str, path: Path, start: str, end: str, block: str) -> str:
    """`text` with what lies between the `start` and `end` markers replaced by `block`."""
    head, found_start, rest = text.partition(start)
    _old_block, found_end, tail = rest.partition(end)
    if not found_start or not found_end:
        raise SystemExit(f"{path.relative_to(ROOT)}: markers {start!r} ... {end!r} not found")
    return f"{head}{start}\n{block}\n{end}{tail}"


def _write_atomically(path: Path, text: str) -> None:
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False) as handle:
        handle.write(text)
    os.chmod(handle.name, path.stat().st_mode)  # keep the file's mode, not the temp file's 0600
    os.replace(handle.name, path)


def main(
    description: str, targets: Sequence[Path], start: str, end: str, block: str, argv: list[str] | None
) -> int:
    """Write `block` into every target, or report the stale ones with `--check`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="report stale blocks instead of writing")
    check = parser.parse_args(argv).check
    stale = []
    for path in targets:
        text = path.read_text(encoding="utf-8")
        new = updated(text, path, start, end, block)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not check:
                _write_atomically(path, new)
    if check and stale:
        script = Path(sys.argv[0]).name
        names = ", ".join(map(str, stale))
        print(f"{description}: out of date in {names}; run: python .ci/{script}", file=sys.stderr)
        return 1
    return 0
