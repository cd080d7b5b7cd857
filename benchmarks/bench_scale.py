"""Benchmark: a steps-only replay run of N questions against a bare pytest run of N trivial tests.

Generates a synthetic corpus (templates of 100 questions; each question has a
SPARQL step and an `iri_discovery` step) and matching responses, then runs, each
in a fresh subprocess on this machine:

- `pytest --graphrag-corpus ... --graphrag-responses ...` at `-n 0` and `-n 2`;
- `pytest` on one test function parametrized N times (the bare baseline), at
  `-n 0` and (for reference: xdist's own cost per test) at `-n 2`.

Prints wall and CPU time (all processes of a run), the ratio to the bare `-n 0`
run and the peak RSS of the largest process of each run. On a shared machine the
CPU times are the steadier figures. Budgets (issue 8), checked only in full mode:

- N = 10,000: the replay run at -n 0 within 2x the bare run, and -n 2 faster than -n 0;
- N = 100,000: the replay run completes with every process under 4 GiB RSS.

    python benchmarks/bench_scale.py            # full run, checks the budgets (several minutes)
    python benchmarks/bench_scale.py --quick    # N = 500, only checks that it works
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import yaml
from timing import announce_quick

QUESTIONS_PER_TEMPLATE = 100
SPARQL_JSON = "application/sparql-results+json"
RSS_BUDGET_BYTES = 4 * 1024**3
RATIO_BUDGET = 2.0

# Runs the command given as arguments and prints the peak RSS (bytes) of its largest process.
# ru_maxrss of RUSAGE_CHILDREN is the maximum over every waited-for descendant, in KiB on Linux.
RSS_WRAPPER = textwrap.dedent(
    """
    import resource, subprocess, sys
    code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
    factor = 1 if sys.platform == "darwin" else 1024
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss * factor)
    sys.exit(code)
    """
)


def sparql_output(entity: str, label: str) -> str:
    bindings = [{"s": {"type": "uri", "value": entity}, "label": {"type": "literal", "value": label}}]
    return json.dumps({"head": {"vars": ["s", "label"]}, "results": {"bindings": bindings}})


def make_corpus(count: int) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """N questions in templates of 100, and one success response per question that matches it."""
    templates: list[dict[str, object]] = []
    responses: list[dict[str, object]] = []
    for start in range(0, count, QUESTIONS_PER_TEMPLATE):
        questions = []
        for index in range(start, min(count, start + QUESTIONS_PER_TEMPLATE)):
            question_id = f"q{index:06d}"
            entity = f"http://example.org/entity/{index}"
            output = sparql_output(entity, f"Entity {index}")
            questions.append(
                {
                    "id": question_id,
                    "question_text": f"What is the label of entity {index}?",
                    "reference_steps": [
                        [
                            {"name": "iri_discovery", "output": entity},
                            {"name": "sparql_query", "output": output, "output_media_type": SPARQL_JSON},
                        ]
                    ],
                }
            )
            responses.append(
                {
                    "question_id": question_id,
                    "actual_answer": f"Entity {index}",
                    "actual_steps": [
                        {"name": "iri_discovery", "id": "c1", "status": "success", "output": entity},
                        {"name": "sparql_query", "id": "c2", "status": "success", "output": output},
                    ],
                }
            )
        templates.append({"template_id": f"t{start // QUESTIONS_PER_TEMPLATE:04d}", "questions": questions})
    return templates, responses


def write_project(folder: Path, count: int) -> None:
    """`replay/` holds the corpus and responses, `bare/` the parametrized test (run apart)."""
    templates, responses = make_corpus(count)
    (folder / "replay").mkdir()
    (folder / "bare").mkdir()
    (folder / "replay" / "corpus.yaml").write_text(
        yaml.safe_dump(templates, sort_keys=False), encoding="utf-8"
    )
    (folder / "replay" / "responses.jsonl").write_text(
        "".join(json.dumps(response) + "\n" for response in responses), encoding="utf-8"
    )
    (folder / "bare" / "test_bare.py").write_text(
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('index', range({count}))\n"
        "def test_trivial(index):\n"
        "    assert index >= 0\n",
        encoding="utf-8",
    )


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_seconds: float
    peak_rss: int
    exit_code: int


def run_pytest(folder: Path, arguments: list[str]) -> Run:
    command = [
        sys.executable,
        "-c",
        RSS_WRAPPER,
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    started = time.perf_counter()
    completed = subprocess.run(
        [*command, *arguments], cwd=folder, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    cpu, peak = completed.stdout.split()[-2:] if completed.stdout.strip() else ("0", "0")
    return Run(seconds, float(cpu), int(peak), completed.returncode)


def replay(folder: Path, workers: int) -> Run:
    return run_pytest(
        folder,
        [
            "-n",
            str(workers),
            "--graphrag-corpus",
            "corpus.yaml",
            "--graphrag-responses",
            "responses.jsonl",
            "--graphrag-report",
            "report.json",
        ],
    )


def check_report(folder: Path, count: int) -> None:
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    scores = [result.get("steps_score") for result in report["results"]]
    if len(scores) != count or any(score != 1.0 for score in scores):
        raise SystemExit(f"the replay run did not score all {count} questions 1.0")


def mib(size: int) -> str:
    return f"{size / 1024**2:,.0f} MiB"


def measure(count: int, workers: list[int], bare_workers: list[int]) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        write_project(folder, count)
        print(f"\nN = {count:,} questions (generated in {time.perf_counter() - started:.1f} s)")
        for worker_count in bare_workers:
            runs[f"bare -n {worker_count}"] = run_pytest(
                folder / "bare", ["-n", str(worker_count), "test_bare.py"]
            )
        for worker_count in workers:
            name = f"-n {worker_count}"
            runs[name] = replay(folder / "replay", worker_count)
            if runs[name].exit_code != 0:
                raise SystemExit(f"the replay run {name} failed with exit code {runs[name].exit_code}")
            check_report(folder / "replay", count)
        baseline = runs.get("bare -n 0")
        print(f"{'run':>25} {'wall s':>8} {'x bare':>7} {'CPU s':>8} {'x bare':>7} {'peak RSS':>10}")
        for name, run in runs.items():
            label = f"{name[:4]} pytest {name[5:]}" if name.startswith("bare") else f"graphrag replay {name}"
            wall = f"{run.seconds / baseline.seconds:.2f}" if baseline else "-"
            cpu = f"{run.cpu_seconds / baseline.cpu_seconds:.2f}" if baseline else "-"
            figures = (
                f"{run.seconds:>8.2f} {wall:>7} {run.cpu_seconds:>8.2f} {cpu:>7} {mib(run.peak_rss):>10}"
            )
            print(f"{label:>25} {figures}")
        print_per_test_costs(runs, count)
    return runs


def print_per_test_costs(runs: dict[str, Run], count: int) -> None:
    """What xdist adds per test, next to what scoring adds: -n 2 can only win when scoring costs more.

    On two cores a `-n 2` run has three processes (the controller and two
    workers) and is bound by its total CPU time over two; xdist's messages cost
    CPU per test in the worker and in the controller, whatever the test does.
    """
    needed = ("bare -n 0", "bare -n 2", "-n 0")
    if not all(name in runs for name in needed):
        return
    xdist = (runs["bare -n 2"].cpu_seconds - runs["bare -n 0"].cpu_seconds) / count * 1000
    scoring = (runs["-n 0"].cpu_seconds - runs["bare -n 0"].cpu_seconds) / count * 1000
    print(f"CPU per test: xdist -n 2 adds {xdist:.2f} ms (bare runs), the plugin {scoring:.2f} ms (-n 0)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="N = 500 only, no budgets (for CI)")
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    if args.quick:
        measure(500, [0, 2], [0, 2])
        return 0
    ok = True
    runs = measure(10_000, [0, 2], [0, 2])
    ratio = runs["-n 0"].seconds / runs["bare -n 0"].seconds
    within = ratio <= RATIO_BUDGET
    faster = runs["-n 2"].seconds < runs["-n 0"].seconds
    verdict = "OK" if within else "EXCEEDED"
    print(f"budget 10,000: -n 0 within {RATIO_BUDGET:.0f}x bare ({ratio:.2f}x): {verdict}")
    print(f"budget 10,000: -n 2 faster than -n 0: {'OK' if faster else 'NOT MET'}")
    ok = ok and within and faster
    runs = measure(100_000, [0, 2], [0])
    largest = max(run.peak_rss for name, run in runs.items() if not name.startswith("bare"))
    fits = largest < RSS_BUDGET_BYTES
    print(f"budget 100,000: every process under 4 GiB RSS ({mib(largest)}): {'OK' if fits else 'EXCEEDED'}")
    return 0 if ok and fits else 1


if __name__ == "__main__":
    sys.exit(main())
