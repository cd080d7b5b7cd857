"""Check: a refactoring leaves the reports of real runs byte for byte as they were, timings blanked.

Writes (`--write DIR`) or checks against (`--check DIR`) the JSON report, the Markdown summary,
the HTML report and the graphrag-eval section of the terminal of:

- the example project: the recorded replay, the regressed recording against it as baseline,
  and the same with gates on the comparison;
- a generated corpus (`tests/synthetic_corpus.py`, 10,000 questions; `--quick`: 300) replayed
  against a baseline run with thresholds and gates, and its three shards merged by
  `graphrag-eval-merge`;

each serial and with `-n 2`. Wall-clock values (start time, durations, elapsed seconds) and the
scratch folder's path are blanked; everything else must be the same bytes. Keep DIR outside the
repository: it is the "before" of a change.

    python benchmarks/bench_report_stability.py --write /tmp/reports-before   # before the change
    python benchmarks/bench_report_stability.py --check /tmp/reports-before   # after it
    python benchmarks/bench_report_stability.py --quick   # small corpus, writes and checks itself
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from timing import announce_quick

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_graphrag_eval.report.markdown_summary import escape_text  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test harnesses
from synthetic_corpus import write_synthetic_project  # noqa: E402

MERGE_SCRIPT = Path(sys.executable).parent / "graphrag-eval-merge"
SYNTHETIC_OPTIONS = [
    "--graphrag-corpus", "corpus.yaml", "--graphrag-judge", "lexical",
    "--graphrag-threshold", "steps_score>=1", "--graphrag-threshold", "answer_f1>=0.8",
    "--graphrag-gate", "steps_score.mean>=0.9", "--graphrag-gate", "template[*]:answer_f1.mean>=0.85",
]  # fmt: skip
_TIMINGS = [
    (re.compile(r'("(?:started_at|duration_sec|elapsed_sec)": )("[^"]*"|[-\d.e]+)'), r"\1<time>"),
    (re.compile(r"\d{4}\\?-\d\d\\?-\d\dT\d\d\\?:\d\d\\?:\d\dZ"), "<time>"),
    (re.compile(r"(?<=duration \(s\) )[\d\\.]+"), "<time>"),
    (re.compile(r"\b\d+(?:\\?\.\d+)? ?(?:s|sec|seconds)\b"), "<time>"),
    (re.compile(r"(?m)^=+ .* in <time>.*$"), "<pytest summary line>"),
    # pytest's "in 100.52s (0:01:40)": the h:mm:ss part is only printed past a minute
    (re.compile(r" \(\d+:\d\d:\d\d\)"), ""),
    # a report this run wrote (the baseline) holds timings, so its content hash differs run to run
    (
        re.compile(r'("path": "<scratch>/[^"]*",\s*(?:"name": "[^"]*",\s*)?"sha256": )"sha256:[0-9a-f]+"'),
        r'\1"<sha256 of a timed file>"',
    ),
]


def blank(text: str, scratch: Path) -> str:
    """The text with wall-clock values and the scratch folder's path replaced by placeholders."""
    for folder, name in ((scratch, "<scratch>"), (ROOT, "<repo>")):  # as written, and as Markdown escapes it
        text = text.replace(str(folder), name).replace(escape_text(str(folder)), name)
    for pattern, replacement in _TIMINGS:
        text = pattern.sub(replacement, text)
    return _blank_elapsed_column(text)


def _blank_elapsed_column(text: str) -> str:
    """The terminal table's last column (mean elapsed seconds) blanked, row by row."""
    lines, in_table = [], False
    for line in text.split("\n"):
        if line.rstrip().endswith("elapsed_s"):
            in_table = True
        elif in_table and line.strip() and " " in line.strip():
            line = line.rstrip().rsplit(" ", 1)[0].rstrip() + "  <time>"
        else:
            in_table = False
        lines.append(line)
    return "\n".join(lines)


def run(command: list[str], cwd: Path) -> str:
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    return completed.stdout + completed.stderr


def pytest_run(cwd: Path, *args: str) -> str:
    """The graphrag-eval section of a pytest run's terminal (pytest's own lines differ under xdist)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    output = run(command, cwd)
    start = output.find("graphrag-eval summary")
    return _sorted_failed_lines(output[start:] if start >= 0 else output)


_SUMMARY_ENTRY = re.compile(r"^(?:FAILED|ERROR|XFAIL|XPASS|SKIPPED|PASSED) ")
_COUNTS_LINE = re.compile(r"^=* ?\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected)\b")


def _sorted_failed_lines(text: str) -> str:
    """pytest's short test summary with its entries sorted: under xdist they come in the order the
    workers finished. An entry is kept whole: on CI (the `CI` variable set) pytest prints a failed
    question's whole report after its FAILED line, not only the line."""
    lines = text.split("\n")
    first = next((index for index, line in enumerate(lines) if _SUMMARY_ENTRY.match(line)), None)
    if first is None:
        return text
    end = next((index for index in range(first, len(lines)) if _COUNTS_LINE.match(lines[index])), len(lines))
    entries: list[list[str]] = []
    for line in lines[first:end]:
        if _SUMMARY_ENTRY.match(line) or not entries:
            entries.append([line])
        else:
            entries[-1].append(line)
    ordered = [line for entry in sorted(entries) for line in entry]
    return "\n".join(lines[:first] + ordered + lines[end:])


def outputs(folder: Path, name: str, prefix: str = "--graphrag-") -> list[str]:
    return [
        f"{prefix}report", str(folder / f"{name}.json"),
        f"{prefix}markdown", str(folder / f"{name}.md"),
        f"{prefix}html", str(folder / f"{name}.html"),
    ]  # fmt: skip


def example_project(scratch: Path, workers: str) -> dict[str, str]:
    """Terminal texts of the example project's replay, baseline and gates runs, outputs under scratch."""
    n = ["-n", workers]
    texts = {}
    texts["replay"] = pytest_run(
        ROOT, "example_project", *n, "--graphrag-responses", "example_project/recordings/responses.jsonl",
        *outputs(scratch, "replay"),
    )  # fmt: skip
    regression = [
        "example_project",
        *n,
        "--graphrag-responses",
        "example_project/recordings/regression.jsonl",
    ]
    baseline = ["--graphrag-baseline", str(scratch / "replay.json")]
    texts["baseline"] = pytest_run(ROOT, *regression, *baseline, *outputs(scratch, "baseline"))
    gates = ["--graphrag-gate", "regressions<=0", "--graphrag-gate", "delta:answer_f1.mean>=-0.02"]
    texts["gates"] = pytest_run(ROOT, *regression, *baseline, *gates, *outputs(scratch, "gates"))
    return texts


def synthetic(scratch: Path, workers: str, count: int) -> dict[str, str]:
    """A generated corpus against its baseline run, whole and as three merged shards."""
    write_synthetic_project(scratch, count, per_template=40)
    n = ["-n", workers]
    texts = {}
    texts["synthetic-baseline"] = pytest_run(
        scratch, *SYNTHETIC_OPTIONS, *n, "--graphrag-responses", "baseline_responses.jsonl",
        *outputs(scratch, "synthetic-baseline"),
    )  # fmt: skip
    current = [
        *SYNTHETIC_OPTIONS, *n, "--graphrag-responses", "responses.jsonl",
        "--graphrag-baseline", "synthetic-baseline.json", "--graphrag-gate", "regressions<=0",
    ]  # fmt: skip
    texts["synthetic"] = pytest_run(scratch, *current, *outputs(scratch, "synthetic"))
    shards = []
    for index in (1, 2, 3):
        shard = f"shard-{index}.json"
        pytest_run(scratch, *current, "--graphrag-shard", f"{index}/3", "--graphrag-report", shard)
        shards.append(shard)
    texts["merged"] = run([str(MERGE_SCRIPT), *shards, *outputs(scratch, "merged", prefix="--")], scratch)
    return texts


def collect(count: int, keep: Callable[[str, str], None]) -> None:
    """Run everything, serial and -n 2, and hand each blanked text to `keep(name, text)`."""
    for workers in ("0", "2"):
        for make in (example_project, lambda folder, w: synthetic(folder, w, count)):
            with tempfile.TemporaryDirectory() as folder:
                scratch = Path(folder).resolve()
                started = time.perf_counter()
                texts = make(scratch, workers)
                for name, terminal in texts.items():
                    keep(f"n{workers}/{name}.terminal.txt", blank(terminal, scratch))
                    for suffix in ("json", "md", "html"):
                        path = scratch / f"{name}.{suffix}"
                        if path.is_file():
                            keep(f"n{workers}/{name}.{suffix}", blank(path.read_text("utf-8"), scratch))
                print(f"-n {workers}: {', '.join(texts)} in {time.perf_counter() - started:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, help="write the blanked outputs into this folder")
    mode.add_argument("--check", type=Path, help="compare the outputs with those written before")
    mode.add_argument("--quick", action="store_true", help="300 questions, writes then checks itself")
    parser.add_argument("--questions", type=int, default=10_000, help="size of the generated corpus")
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    count = 300 if args.quick else args.questions
    written: dict[str, str] = {}
    collect(count, written.__setitem__)
    if args.write is not None:
        for name, text in written.items():
            (args.write / name).parent.mkdir(parents=True, exist_ok=True)
            (args.write / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(written)} files into {args.write}")
        return 0
    if args.quick:
        expected = written
        written = {}
        collect(count, written.__setitem__)
    else:
        expected = {  # blanked again: a blanking made finer since they were written applies to both
            str(path.relative_to(args.check)): _blank_elapsed_column(path.read_text("utf-8"))
            for path in sorted(args.check.rglob("*"))
            if path.is_file()
        }
    return compare(expected, written)


def _first_difference(before: list[str], after: list[str], shown: int = 40) -> str:
    """A unified diff of the region between the common head and the common tail: linear, where
    difflib's matching on a whole 10,000-question report (hundreds of thousands of lines, many
    changes) takes hours."""
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    window_before = before[head : min(len(before) - tail, head + shown)]
    window_after = after[head : min(len(after) - tail, head + shown)]
    diff = difflib.unified_diff(window_before, window_after, "before", "after", lineterm="", n=1)
    lines = [
        line.replace("@@ -", f"@@ (from line {head + 1}) -", 1) if line.startswith("@@") else line
        for line in diff
    ]
    return "\n".join(lines[:shown])


def compare(expected: dict[str, str], actual: dict[str, str]) -> int:
    changed = 0
    for name in sorted(expected.keys() | actual.keys()):
        one, other = expected.get(name), actual.get(name)
        if one == other:
            continue
        changed += 1
        if one is None or other is None:
            print(f"{name}: {'new' if one is None else 'missing'}")
            continue
        print(f"{name}: differs\n" + _first_difference(one.splitlines(), other.splitlines()))
    print(f"{len(expected) - changed} of {len(expected)} outputs byte-identical (timings blanked)")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
