"""Check: the reports differ from the release before the typed core (`b41830f`) only as issues asked.

Issue 28 (a typed core) asks for the reports to stay byte-identical; issues 28, 30 and 32 changed
them on purpose. This check takes two folders written by `bench_report_stability.py --write`, one
by `b41830f` and one by today's tree, undoes each intended change with one rewrite rule (counting
how often each fires) and requires every file to be identical after that:

    git worktree add --detach /tmp/before b41830f   # give it its own venv, then in it:
    python benchmarks/bench_report_stability.py --write /tmp/reports-b41830f
    python benchmarks/bench_report_stability.py --write /tmp/reports-now      # in this tree
    python benchmarks/report_changes_since_b41830f.py /tmp/reports-b41830f /tmp/reports-now [--keep DIR]

With `--keep DIR`, the rewritten texts of the files that still differ are written under
DIR/before and DIR/after, for `diff -r`. The rules are specific to that release, so the check
is not run by CI: `bench_report_stability.py` guards every later change.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Callable
from pathlib import Path

_HISTORY_SCRIPT = "HTML script: history strip (issue 32), outcome pill labels (issue 30), CSP hash"
_HISTORY_CSS = "HTML history CSS and its CSP hash (issue 32)"
_PATHS = "paths shown relative to the rootdir (issue 30)"
_VOCABULARY = "one outcome vocabulary (issue 30)"
_ELAPSED = "pytest's h:mm:ss elapsed (blanked since)"
_KEY_ORDER = "once_per_sample keys in first-seen order (issue 28)"
_REPEATS = "judge_repeats stored resolved (issue 28)"


Replacement = str | Callable[[re.Match[str]], str]


class Rules:
    """The rewrite rules, each counting the places it rewrote."""

    def __init__(self) -> None:
        self.hits: collections.Counter[str] = collections.Counter()

    def sub(self, rule: str, pattern: str, replacement: Replacement, text: str) -> str:
        rewritten, count = re.subn(pattern, replacement, text)
        self.hits[rule] += count
        return rewritten

    def sorted_objects(self, rule: str, key: str, text: str) -> str:
        """The member lines of every multi-line `"key": {...}` object sorted."""
        lines, out, index = text.split("\n"), [], 0
        while index < len(lines):
            line = lines[index]
            out.append(line)
            index += 1
            if not line.strip().startswith(f'"{key}": {{') or line.rstrip().endswith("}"):
                continue
            indent = len(line) - len(line.lstrip())
            end = index
            closing = " " * indent + "}"
            while not lines[end].startswith(closing):
                end += 1
            members = [member.rstrip(",") for member in lines[index:end]]
            self.hits[rule] += members != sorted(members)
            out += [*sorted(members), lines[end]]
            index = end + 1
        return "\n".join(out)

    def canonical(self, text: str, name: str, before: bool) -> str:
        """`text` of output `name` with every intended change undone (or both sides made alike)."""
        sub = self.sub
        text = sub(_ELAPSED, r"\(\d+:\d\d:\d\d\)", "(<time>)", text)
        if before:
            text = sub(
                "step numbering as reference_steps[i][j] (issue 30)",
                r"group (\d+) step (\d+)",
                lambda m: f"reference_steps[{int(m.group(1)) - 1}][{int(m.group(2)) - 1}]",
                text,
            )
            text = sub(
                _VOCABULARY,
                r"; (\d+) with an agent error",
                lambda m: f", {m.group(1)} agent error" + ("" if m.group(1) == "1" else "s"),
                text,
            )
            text = sub(_VOCABULARY, r"\| Errors \|", "| Agent errors |", text)
            text = sub(_VOCABULARY, r"(?m)^(template +questions)  errors", r"\1  agent_errors", text)
        if name.endswith(".json"):
            text = self.sorted_objects(_KEY_ORDER, "once_per_sample", text)
            if not before:
                text = sub(
                    "settings.responses identified by content (issue 30)",
                    r'\n *"responses": "sha256:[0-9a-f]+",',
                    "",
                    text,
                )
                text = sub(_PATHS, r'("baseline": \{\n *)"name": "[^"]*",\n *', r"\1", text)
            text = sub(_REPEATS, r'("judge_repeats": )(null|\d+)', r"\1<n>", text)
        if name.endswith(".md"):
            if not before:
                text = sub(
                    "Markdown failed-questions table without a baseline (issue 30)",
                    r"### Failed questions \(\d+ of \d+\)\n\n\| Test \| Why \|\n\| --- \| --- \|\n"
                    r"(?:\|.*\|\n)+\n(?:… and \d+ more failed questions\.\n\n?)?",
                    "",
                    text,
                )
            text = text.rstrip("\n")  # that section's separator line, at the end of a file
        text = sub(_PATHS, r"<repo>/example_project/|<scratch>/", "", text)
        if name.endswith(".terminal.txt"):
            text = sub(_ELAPSED, r" \(<time>\)", "", text)
            # pytest centres a separator on the terminal's width: its dashes follow the path's length
            text = sub(_PATHS, r"(?m)^-+ (generated graphrag-eval .*?) -+$", r"\1", text)
            text = re.sub(r" {2,}", "  ", text)  # column widths, which the `agent_errors` heading widened
            if not before:
                text = sub(_VOCABULARY, r"(?m)^\d+ questions: [^\n]*\n", "", text)
        if name.endswith(".html"):
            text = sub("HTML history section's empty block: a blank line (issue 32)", r"\n{3,}", "\n\n", text)
            text = sub(_HISTORY_SCRIPT, r"script-src &#39;sha256-[^&]+&#39;", "script-src <h>", text)
            text = sub(_HISTORY_SCRIPT, r"(?s)<script>.*?</script>", "<script/>", text)
            text = sub(_HISTORY_CSS, r"style-src &#39;sha256-[^&]+&#39;", "style-src <h>", text)
            text = sub(_HISTORY_CSS, r"(?s)<style>.*?</style>", "<style/>", text)
        return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", type=Path, help="written by b41830f's bench_report_stability.py --write")
    parser.add_argument("after", type=Path, help="written by this tree's bench_report_stability.py --write")
    parser.add_argument("--keep", type=Path, help="write the rewritten texts of differing files here")
    args = parser.parse_args(argv)
    rules = Rules()
    files = sorted(path.relative_to(args.before) for path in args.before.rglob("*") if path.is_file())
    as_written, left = 0, []
    for relative in files:
        old = (args.before / relative).read_text(encoding="utf-8")
        new = (args.after / relative).read_text(encoding="utf-8")
        as_written += old == new
        rewritten = (rules.canonical(old, relative.name, True), rules.canonical(new, relative.name, False))
        if rewritten[0] == rewritten[1]:
            continue
        left.append(relative)
        for side, text in zip(("before", "after"), rewritten, strict=True):
            if args.keep is not None:
                (args.keep / side / relative).parent.mkdir(parents=True, exist_ok=True)
                (args.keep / side / relative).write_text(text, encoding="utf-8")
    print(f"{len(files)} files: {as_written} identical as written, {len(files) - len(left)} after the rules")
    for rule, count in sorted(rules.hits.items()):
        print(f"  {count:7d}  {rule}")
    for relative in left:
        print(f"still differs: {relative}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
