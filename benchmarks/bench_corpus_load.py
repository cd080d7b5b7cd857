"""Benchmark: loading corpora as teams write them, against LibYAML's plain load and graphrag-eval 6.6.1.

A team builds its corpus in Python and writes it with `yaml.safe_dump`; objects it shares (a
template's metadata, the keywords and query arguments of a question's variants) come out as
anchors and aliases (`&id001` ... `*id001`). One seeded set of questions (the KGQA shape of
`bench_kgqa_shape.py`: 6,140 questions, SPARQL JSON outputs up to 4,269 rows) is written five ways:

- anchored: `safe_dump` of the objects with their shared parts (block style, long scalars folded
  at 80 columns), about 27 MB;
- block: the same without shared objects (no anchors);
- flow: without shared objects, leaf collections in flow style (`default_flow_style=None`);
- long scalars: the anchored objects with every scalar on one line (`width` unbounded), as
  converters write them;
- hand-written: rendered line by line as a person writes YAML: comments, named anchors, a merge key
  (`<<: *sparql_step`) per step, queries as `|` block scalars, outputs as single-quoted JSON.

Timed side by side in one run, in CPU seconds of this process (the work is single-threaded),
alternating run by run, median of `--runs`:

(a) our corpus load: `load_corpus` (parse, lines, bounds, validation, typed questions);
(b) `yaml.load(handle, Loader=yaml.CSafeLoader)` on the same file: what a graphrag-eval user
    calls before `run_evaluation`, with no lines, bounds or validation;
(c) with `--other-tree PATH` (a checkout of another version of this package, e.g. an earlier
    commit), that version's `load_corpus`, in a subprocess with this interpreter;
(d) on the anchored shape, the whole library run (load, score, aggregate: `load_corpus` +
    `load_responses`, `run_evaluation`, `compute_aggregates`) beside graphrag-eval 6.6.1's
    (`CSafeLoader` + `json`, its `run_evaluation` and `compute_aggregates`) in its own interpreter,
    each run of each side in a fresh process (as a user's run is: nothing warmed by earlier runs):
    `--graphrag-eval-python PATH` or GRAPHRAG_EVAL_PYTHON (Python 3.12 with `graphrag-eval==6.6.1`
    and `pyyaml`); skipped without it, and in `--quick` mode. Both sides read compiled bytecode, as
    installed packages do (ours from a cache in the benchmark's folder).

Budgets (issue 42), checked only in full mode: on the anchored shape our load no slower than (b),
and the library run at most 0.5x graphrag-eval's time.

    python benchmarks/bench_corpus_load.py --graphrag-eval-python PATH [--other-tree PATH]
    python benchmarks/bench_corpus_load.py --quick     # small, one run, only checks that it works (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from bench_kgqa_shape import QUESTIONS, TEMPLATES, make_data
from bench_typical_data import phases_printed_by, their_phases
from timing import announce_quick

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus

ROOT = Path(__file__).resolve().parents[1]
LOAD_BUDGET = 1.0  # our load / CSafeLoader's, anchored shape
LIBRARY_BUDGET = 0.5  # our library run / graphrag-eval's
# An anchor token (`&id001`, `&meta_en`): after a line start, a space or a flow indicator, unlike `AT&T`.
ANCHOR = re.compile(rb"(?:^|[\s\[{,])&[^\s\[\]{},]+", re.MULTILINE)

# Run by `--other-tree`'s checkout: argv = the tree, then corpus files; prints CPU seconds per file.
OTHER_TREE_TIMER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
seconds = []
for path in sys.argv[2:]:
    start = time.process_time()
    load_corpus(path)
    seconds.append(time.process_time() - start)
print(json.dumps(seconds))
"""


def share_as_a_team_would(corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The variants of one question (same `source_id`) given one keywords list and one query-arguments
    dict, as code that builds them from one base question does; the template metadata is shared by
    `make_data` already."""
    first: dict[str, dict[str, Any]] = {}
    for template in corpus:
        for question in template["questions"]:
            base = first.setdefault(question["source_id"], question)
            question["keywords"] = base["keywords"]
            question["reference_steps"][0][0]["args"] = base["reference_steps"][0][0]["args"]
    return corpus


def unshared(corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same values with nothing shared (what a JSON round trip gives)."""
    copied: list[dict[str, Any]] = json.loads(json.dumps(corpus))
    return copied


def hand_written(corpus: list[dict[str, Any]]) -> str:
    """The corpus as a person writes it: comments, named anchors, a merge key per step, block scalars."""
    lines = ["# Questions over DBpedia, converted from the KGQA benchmark and checked by hand.", ""]
    metas: dict[int, str] = {}
    step_defaults_written = False
    for template in corpus:
        lines += [f"# {template['template_id']}", f"- template_id: {template['template_id']}", "  questions:"]
        for question in template["questions"]:
            meta = question["meta"]
            step = question["reference_steps"][0][0]
            keywords = ", ".join(json.dumps(keyword, ensure_ascii=False) for keyword in question["keywords"])
            query_lines = step["args"]["query"].replace(" PREFIX ", "\nPREFIX ").split("\n")
            lines += [
                f"    - id: {question['id']}",
                f"      question_text: {json.dumps(question['question_text'], ensure_ascii=False)}",
                f"      source_id: {question['source_id']}",
                f"      keywords: [{keywords}]",
            ]
            if id(meta) in metas:
                lines.append(f"      meta: *{metas[id(meta)]}")
            else:
                metas[id(meta)] = name = f"meta_{meta['language']}"
                lines.append(f"      meta: &{name} {{{', '.join(f'{k}: {v}' for k, v in meta.items())}}}")
            lines += ["      reference_steps:", "        - - name: sparql_query"]
            if step_defaults_written:
                lines.append("            <<: *sparql_step")
            else:
                step_defaults_written = True
                lines += [
                    "            <<: &sparql_step",
                    f"              output_media_type: {step['output_media_type']}",
                ]
            quoted_output = "'" + step["output"].replace("'", "''") + "'"
            lines += [
                "            args:",
                "              query: |",
                *(f"                {part}" for part in query_lines),
                f"            output: {quoted_output}",
                f"            required_columns: [{', '.join(step['required_columns'])}]  # checked",
                "",
            ]
    return "\n".join(lines)


def safe_dump(corpus: list[dict[str, Any]], **options: Any) -> str:
    """What `yaml.safe_dump` writes, written by LibYAML's emitter: the same bytes (anchors, aliases and
    folding included) ten times sooner."""
    text: str = yaml.dump(corpus, Dumper=yaml.CSafeDumper, allow_unicode=True, sort_keys=False, **options)
    return text


def write_shapes(folder: Path, count: int, templates: int, seed: int) -> tuple[dict[str, Path], Path]:
    """The five corpus files (by shape) and the responses file."""
    corpus, responses = make_data(count, templates, seed)
    shared = share_as_a_team_would(corpus)
    plain = unshared(shared)
    texts = {
        "anchored": safe_dump(shared),
        "block": safe_dump(plain),
        "flow": safe_dump(plain, default_flow_style=None),
        "long scalars": safe_dump(shared, width=2**31 - 1),
        "hand-written": hand_written(shared),
    }
    paths = {}
    for shape, text in texts.items():
        paths[shape] = folder / (shape.replace(" ", "_") + ".yaml")
        paths[shape].write_text(text, encoding="utf-8")
    responses_path = folder / "responses.jsonl"
    responses_path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in responses), encoding="utf-8"
    )
    return paths, responses_path


def cpu_seconds(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = action()
    return time.process_time() - start, result


def load_plainly(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=yaml.CSafeLoader)


def other_tree_seconds(tree: Path, paths: list[Path]) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", OTHER_TREE_TIMER, str(tree), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the other tree's load failed:\n{done.stderr[-2000:]}")
    seconds: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds


def time_loads(paths: dict[str, Path], runs: int, other_tree: Path | None) -> dict[str, dict[str, float]]:
    """Median CPU seconds per shape of our load, the plain CSafeLoader load and the other tree's, each
    run alternating; the question ids of ours and the plain load are checked to agree."""
    measured: dict[str, dict[str, list[float]]] = {shape: {} for shape in paths}
    for _ in range(runs):
        for shape, path in paths.items():
            ours, corpus = cpu_seconds(partial(load_corpus, path))
            plain, document = cpu_seconds(partial(load_plainly, path))
            plain_ids = [question["id"] for template in document for question in template["questions"]]
            if corpus.question_ids() != plain_ids:
                raise SystemExit(f"{shape}: our load and CSafeLoader's disagree on the questions")
            measured[shape].setdefault("ours", []).append(ours)
            measured[shape].setdefault("CSafeLoader", []).append(plain)
        if other_tree is not None:
            for shape, seconds in zip(
                paths, other_tree_seconds(other_tree, list(paths.values())), strict=True
            ):
                measured[shape].setdefault("other tree", []).append(seconds)
    return {
        shape: {side: statistics.median(values) for side, values in sides.items()}
        for shape, sides in measured.items()
    }


PHASES = ("load", "score", "aggregate", "total")


# Run in a fresh process with this interpreter: argv = the repository, corpus, responses; prints the
# CPU seconds of each phase of one library run (imports first, untimed, as graphrag-eval's side does).
OUR_TIMER = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/benchmarks"]
from pathlib import Path
from bench_typical_data import our_phases
print(json.dumps(our_phases(Path(sys.argv[2]), Path(sys.argv[3]))()))
"""


def our_fresh_phases(corpus: Path, responses: Path, environment: dict[str, str]) -> dict[str, float]:
    command = [sys.executable, "-c", OUR_TIMER, str(ROOT), str(corpus), str(responses)]
    return phases_printed_by(command, "our library run", environment)


def compiled_environment(folder: Path) -> dict[str, str]:
    """Our side's environment with bytecode caching on, in `folder`'s own cache, filled here: as an
    installed package has it (graphrag-eval's side reads the caches pip wrote). Where
    PYTHONDONTWRITEBYTECODE is set, every run compiled the modules scoring imports lazily again."""
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = str(folder.resolve() / "pycache")
    folders = [str(ROOT / "pytest_graphrag_eval"), str(ROOT / "benchmarks")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=environment, check=True)
    return environment


def time_library_runs(
    corpus: Path, responses: Path, runs: int, graphrag_eval_python: str | None
) -> tuple[dict[str, float], dict[str, float] | None]:
    """Median CPU seconds per phase (and their total) of our whole library run and graphrag-eval's,
    alternating run by run, each in a fresh process."""
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    environment = compiled_environment(corpus.parent)
    for _ in range(runs):
        phases = our_fresh_phases(corpus, responses, environment)
        ours.append({**phases, "total": sum(phases.values())})
        if graphrag_eval_python:
            theirs.append(their_phases(graphrag_eval_python, corpus, responses, 1))

    def medians(measured: list[dict[str, float]]) -> dict[str, float]:
        return {phase: statistics.median(run[phase] for run in measured) for phase in PHASES}

    return medians(ours), (medians(theirs) if theirs else None)


def phase_line(side: str, phases: dict[str, float]) -> str:
    return f"{side:>20} " + " ".join(f"{phases[phase]:>9.2f}s" for phase in PHASES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a small corpus, one run, no budget (for CI)")
    parser.add_argument("--runs", type=int, default=5, help="runs per side, alternating; medians are shown")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--graphrag-eval-python",
        default=os.environ.get("GRAPHRAG_EVAL_PYTHON"),
        help="a Python with graphrag-eval 6.6.1 and pyyaml installed (default: $GRAPHRAG_EVAL_PYTHON)",
    )
    parser.add_argument(
        "--other-tree", type=Path, help="a checkout of another version of this package, timed beside ours"
    )
    parser.add_argument("--keep", type=Path, help="write the files into this folder and keep them")
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    count, templates, runs = (300, 6, 1) if args.quick else (QUESTIONS, TEMPLATES, args.runs)
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        paths, responses = write_shapes(folder, count, templates, args.seed)
        print(f"{count} questions in {templates} templates (seed {args.seed}); median of {runs} run(s)")
        loads = time_loads(paths, runs, args.other_tree)
        print(
            f"{'CPU seconds':>14} {'MB':>6} {'anchors':>8} {'ours':>7} {'CSafeLoader':>12} {'ratio':>6}",
            end="",
        )
        print(f" {'other tree':>11} {'ratio':>6}" if args.other_tree else "")
        for shape, path in paths.items():
            data = path.read_bytes()
            sides = loads[shape]
            line = (
                f"{shape:>14} {len(data) / 1e6:>6.1f} {len(ANCHOR.findall(data)):>8} {sides['ours']:>6.2f}s "
                f"{sides['CSafeLoader']:>11.2f}s {sides['ours'] / sides['CSafeLoader']:>5.2f}x"
            )
            if "other tree" in sides:
                line += f" {sides['other tree']:>10.2f}s {sides['ours'] / sides['other tree']:>5.2f}x"
            print(line)
        if args.quick or not args.graphrag_eval_python:
            reason = "--quick" if args.quick else "no --graphrag-eval-python / GRAPHRAG_EVAL_PYTHON"
            print(f"graphrag-eval 6.6.1: library run comparison skipped ({reason})")
            ours_library, _ = time_library_runs(paths["anchored"], responses, 1, None)
            print(f"library run (anchored shape): ours {ours_library['total']:.2f}s")
            return 0
        ours_library, theirs_library = time_library_runs(
            paths["anchored"], responses, runs, args.graphrag_eval_python
        )
    assert theirs_library is not None
    library_ratio = ours_library["total"] / theirs_library["total"]
    print("library run (anchored shape), CPU seconds by phase:")
    print(f"{'':>20} " + " ".join(f"{phase:>10}" for phase in PHASES))
    print(phase_line("ours", ours_library))
    print(phase_line("graphrag-eval 6.6.1", theirs_library))
    print(f"library run: ours / graphrag-eval's = {library_ratio:.2f}x")
    load_ratio = loads["anchored"]["ours"] / loads["anchored"]["CSafeLoader"]
    load_met, library_met = load_ratio <= LOAD_BUDGET, library_ratio <= LIBRARY_BUDGET
    print(
        f"budget load (anchored) <= {LOAD_BUDGET:.1f}x CSafeLoader's: " + ("OK" if load_met else "EXCEEDED")
    )
    print(
        f"budget library run <= {LIBRARY_BUDGET:.1f}x graphrag-eval's: "
        + ("OK" if library_met else "EXCEEDED")
    )
    return 0 if load_met and library_met else 1


if __name__ == "__main__":
    sys.exit(main())
