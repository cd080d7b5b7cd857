"""Benchmark: typical knowledge-graph QA data, our library and pytest run against graphrag-eval 6.6.1.

The worst-case benchmark (bench_sparql_worst_case.py) shows where graphrag-eval
explodes; this one times the data teams actually have. It generates (seeded) a
corpus shaped like public KGQA benchmarks over DBpedia and a recording of agent
answers, written as real files (corpus YAML, responses JSONL) in a temporary folder:

- questions over long and percent-encoded IRIs, multilingual labels with language
  tags, typed literals (counts, dates, numbers); mostly 1 to 50 rows, a tail of
  answers of 4,000+ rows, ASK questions; some with an `iri_discovery` group first;
- agents that search for IRIs before they query (`autocomplete_search` steps);
- per question, the agent variants that matter: identical, renamed variables,
  shuffled rows, a row missing, a row extra, an extra column, labels instead of
  IRIs, typed literals where the reference has plain ones (and the reverse), an
  empty result; for ASK, the same answer, the opposite one, a SELECT instead.

Timed side by side in one run, in CPU seconds of the process doing the work (steadier than
wall time on a shared machine; the work is single-threaded), median of `--runs` per phase:

(a) our library: `load_corpus` + `load_responses` (load), `run_evaluation` with
    graphrag-eval's group semantics (score), `compute_aggregates` (aggregate);
(b) graphrag-eval 6.6.1, in its own interpreter (Python 3.12): the corpus read by
    PyYAML's fastest safe loader (LibYAML's `CSafeLoader`; with `--pure-python-load`,
    `yaml.safe_load`, pure Python and minutes on a large corpus, is timed once for reference) and
    `json.loads` per line (load), its `run_evaluation`,
    its `compute_aggregates`.
    Pass `--graphrag-eval-python PATH` or set GRAPHRAG_EVAL_PYTHON (a venv with
    `pip install graphrag-eval==6.6.1 pyyaml`); skipped without;
(c) a whole replay run of the plugin on the same files (`pytest --graphrag-corpus ...
    --graphrag-responses ...`, one fresh process, `-n 0`), beside graphrag-eval's library run.

10,000 questions by default (`--questions`).

Budgets (issue 20), checked only in full mode with graphrag-eval: the library run
and the load alone at least 2x faster than graphrag-eval's.

    python benchmarks/bench_typical_data.py --graphrag-eval-python PATH [--questions 10000]
    python benchmarks/bench_typical_data.py --quick     # small, only checks that it runs (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from timing import announce_quick, median_phases

from pytest_graphrag_eval.aggregates import compute_aggregates
from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.corpus.responses import load_responses
from pytest_graphrag_eval.evaluation import run_evaluation

SPARQL_JSON = "application/sparql-results+json"
XSD = "http://www.w3.org/2001/XMLSchema#"
DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
QUESTIONS_PER_TEMPLATE = 50
LARGE_EVERY = 300  # one question in this many (before variants) has an answer of 4,000+ rows
SPEEDUP_BUDGET = 2.0
SELECT_VARIANTS = (
    "identical",
    "renamed",
    "shuffled",
    "row_missing",
    "row_extra",
    "extra_column",
    "labels_for_iris",
    "literal_typing",
    "empty",
)
ASK_VARIANTS = ("identical", "opposite", "select_instead")

# Real DBpedia resource names: accents, scripts, punctuation, as the IRIs spell them (percent-encoded or not).
NAMES = [
    ("München", "de"),
    ("São_Paulo", "pt"),
    ("Björk", "is"),
    ("Łódź", "pl"),
    ("Zürich", "de"),
    ("Москва", "ru"),
    ("東京都", "ja"),
    ("القاهرة", "ar"),
    ("Αθήνα", "el"),
    ("서울특별시", "ko"),
    ("Kraków", "pl"),
    ("Île-de-France", "fr"),
    ("Ciudad_de_México", "es"),
    ("AT&T", "en"),
    ("Procter_&_Gamble", "en"),
    ("Saint-Étienne", "fr"),
    ("Dvořák", "cs"),
    ("Göteborg", "sv"),
    ("Hồ_Chí_Minh_City", "vi"),
    ("İstanbul", "tr"),
]
WORDS = ("River", "Mountain", "Airport", "University", "Museum", "Cathedral", "Company", "Bridge", "Lake")
PROPERTIES = ("birthPlace", "country", "capital", "leaderName", "foundingDate", "location", "author")


def percent_encoded(name: str) -> str:
    """How DBpedia IRIs often arrive: non-ASCII and reserved characters as %XX escapes."""
    return "".join(
        char
        if char.isascii() and (char.isalnum() or char in "_-.()")
        else "".join(f"%{b:02X}" for b in char.encode())
        for char in name
    )


def entity(rng: random.Random, index: int) -> tuple[dict[str, str], dict[str, str]]:
    """An IRI cell and its label cell (language-tagged) for one entity."""
    name, lang = rng.choice(NAMES)
    suffix = f"_{rng.choice(WORDS)}_{index}" if rng.random() < 0.8 else f"_(disambiguation_{index})"
    local = name + suffix
    if rng.random() < 0.5:
        local = percent_encoded(local)
    if rng.random() < 0.3:  # long Wikipedia-style titles
        local += "_" + "_".join(rng.choices(WORDS, k=rng.randint(4, 10)))
    label = {"type": "literal", "value": name.replace("_", " ") + suffix.replace("_", " "), "xml:lang": lang}
    return {"type": "uri", "value": DBR + local}, label


def typed(value: str, datatype: str) -> dict[str, str]:
    return {"type": "literal", "datatype": XSD + datatype, "value": value}


def select_output(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}}, ensure_ascii=False)


def ask_output(answer: bool) -> str:
    return json.dumps({"head": {}, "boolean": answer})


@dataclass
class Base:
    """One question's reference answer table (or ASK boolean) and query, before agent variants."""

    kind: str
    variables: list[str]
    rows: list[list[dict[str, str]]]
    query: str
    text: str
    boolean: bool = False
    anchor_iri: str | None = None


def base_question(rng: random.Random, index: int, large: bool) -> Base:
    prop = rng.choice(PROPERTIES)
    prefixes = (
        f"PREFIX dbo: <{DBO}> PREFIX dbr: <{DBR}> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
    )
    anchor, anchor_label = entity(rng, index)
    where = (
        f"WHERE {{ ?x dbo:{prop} <{anchor['value']}> . ?x rdfs:label ?label . FILTER(lang(?label) = 'en') }}"
    )
    if rng.random() < 0.12 and not large:
        truth = rng.random() < 0.6
        query = f"{prefixes}ASK {{ <{anchor['value']}> dbo:{prop} ?o }}"
        return Base(
            "ask", [], [], query, f"Does {anchor_label['value']} have a {prop}?", truth, anchor["value"]
        )
    shape = rng.choice(["iri", "iri_label", "iri_label", "count", "date", "number"])
    count = rng.randint(4000, 6000) if large else min(50, max(1, int(rng.expovariate(1 / 6))))
    text = f"Which things have {prop} {anchor_label['value']}?"
    if shape in ("count", "date", "number") and not large:
        if shape == "count":
            row = [typed(str(rng.randint(0, 5000)), "integer")]
        elif shape == "date":
            row = [
                typed(f"{rng.randint(1100, 2020)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "date")
            ]
        else:
            row = [typed(f"{rng.uniform(1, 1e6):.2f}", "double")]
        query = f"{prefixes}SELECT (COUNT(?x) AS ?{shape}) {where}"
        return Base("value", [shape], [row], query, f"How many things have {prop} {anchor_label['value']}?")
    pairs = [entity(rng, index * 10_000 + row) for row in range(count)]
    if shape == "iri":
        return Base(
            "select", ["x"], [[iri] for iri, _ in pairs], f"{prefixes}SELECT DISTINCT ?x {where}", text
        )
    rows = [[iri, label] for iri, label in pairs]
    return Base("select", ["x", "label"], rows, f"{prefixes}SELECT DISTINCT ?x ?label {where}", text)


def select_variant(rng: random.Random, base: Base, variant: str, index: int) -> str:
    """The agent's SELECT output for one variant of `base`."""
    variables, rows = list(base.variables), [list(row) for row in base.rows]
    if variant == "renamed":
        variables = [f"{name}_{rng.choice(['res', 'v', 'item'])}" for name in variables]
    elif variant == "shuffled":
        rng.shuffle(rows)
    elif variant == "row_missing" and len(rows) > 1:
        rows.pop(rng.randrange(len(rows)))
    elif variant == "row_extra":
        rows.append(extra_row(rng, base, index))
    elif variant == "extra_column":
        variables.append("abstract")
        rows = [
            [*row, {"type": "literal", "value": "Ein Artikel über " + row[0]["value"], "xml:lang": "de"}]
            for row in rows
        ]
    elif variant == "labels_for_iris":
        rows = [
            [
                {"type": "literal", "value": cell["value"].rsplit("/", 1)[-1].replace("_", " ")}
                if cell["type"] == "uri"
                else cell
                for cell in row
            ]
            for row in rows
        ]
    elif variant == "literal_typing":
        rows = [[retyped(cell) for cell in row] for row in rows]
    elif variant == "empty":
        rows = []
    return select_output(variables, rows)


def extra_row(rng: random.Random, base: Base, index: int) -> list[dict[str, str]]:
    """A row the reference lacks, shaped like its rows."""
    if base.kind == "value":
        return [dict(base.rows[0][0], value=base.rows[0][0]["value"] + "1")]
    iri, label = entity(rng, 10**9 + index)
    return [iri, label][: len(base.variables)]


def retyped(cell: dict[str, str]) -> dict[str, str]:
    """A typed literal as a plain one, a language-tagged label as a plain string (as some agents send)."""
    if "datatype" in cell:
        return {"type": "literal", "value": cell["value"]}
    if "xml:lang" in cell:
        return {"type": "literal", "value": cell["value"]}
    return cell


def search_step(rng: random.Random, number: int, index: int, hit: str | None) -> dict[str, Any]:
    """An `autocomplete_search` call: a few candidate IRIs with labels, the right one among them or not."""
    pairs = [entity(rng, 10**8 + index * 10 + n) for n in range(rng.randint(2, 6))]
    rows = [[iri, label] for iri, label in pairs]
    if hit is not None:
        rows.insert(rng.randrange(len(rows) + 1), [{"type": "uri", "value": hit}, pairs[0][1]])
    return {
        "id": f"call_{number}",
        "name": "autocomplete_search",
        "args": {"query": pairs[0][1]["value"], "limit": 10},
        "status": "success",
        "output": select_output(["iri", "label"], rows),
    }


def question_and_response(
    rng: random.Random, base: Base, variant: str, question_id: str, index: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    if base.kind == "ask":
        reference_output = ask_output(base.boolean)
        actual_output = {
            "identical": reference_output,
            "opposite": ask_output(not base.boolean),
            "select_instead": select_output(["o"], [[typed("1", "integer")]]),
        }[variant]
        required: list[str] = []
    else:
        reference_output = select_output(base.variables, base.rows)
        actual_output = select_variant(rng, base, variant, index)
        required = list(base.variables)
    sparql_reference = {
        "name": "sparql_query",
        "args": {"query": base.query},
        "output": reference_output,
        "output_media_type": SPARQL_JSON,
        "required_columns": required,
    }
    groups: list[list[dict[str, Any]]] = [[sparql_reference]]
    anchor = base.rows[0][0]["value"] if base.rows and base.rows[0][0]["type"] == "uri" else base.anchor_iri
    if anchor is not None and rng.random() < 0.3:
        groups.insert(
            0,
            [
                {
                    "name": "iri_discovery",
                    "output": anchor,
                    "output_media_type": "text/uri",
                    "required_columns": ["uri"],
                }
            ],
        )
    steps = [
        search_step(rng, number + 1, index, anchor if rng.random() < 0.7 else None)
        for number in range(rng.randint(0, 2))
    ]
    steps.append(
        {
            "id": f"call_{len(steps) + 1}",
            "name": "sparql_query",
            "args": {"query": base.query},
            "status": "success",
            "output": actual_output,
        }
    )
    question = {"id": question_id, "question_text": base.text, "reference_steps": groups}
    tokens_in, tokens_out = rng.randint(800, 9000), rng.randint(50, 600)
    response = {
        "question_id": question_id,
        "actual_answer": f"The answer has {len(base.rows)} result(s).",
        "actual_steps": steps,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "elapsed_sec": round(rng.uniform(0.5, 20), 3),
    }
    return question, response


def make_data(count: int, seed: int, large_every: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`count` questions (bases times their variants, in templates of 50) and one response per question."""
    rng = random.Random(seed)
    questions: list[dict[str, Any]] = []
    responses: list[dict[str, Any]] = []
    index = 0
    while len(questions) < count:
        base = base_question(rng, index, large=index % large_every == large_every - 1)
        variants = (
            ASK_VARIANTS
            if base.kind == "ask"
            else rng.sample(SELECT_VARIANTS, rng.randint(4, len(SELECT_VARIANTS)))
        )
        for variant in variants[: count - len(questions)]:
            question, response = question_and_response(rng, base, variant, f"q{index:05d}-{variant}", index)
            questions.append(question)
            responses.append(response)
        index += 1
    templates = [
        {
            "template_id": f"t{start // QUESTIONS_PER_TEMPLATE:04d}",
            "questions": questions[start : start + QUESTIONS_PER_TEMPLATE],
        }
        for start in range(0, len(questions), QUESTIONS_PER_TEMPLATE)
    ]
    return templates, responses


def write_files(folder: Path, count: int, seed: int, large_every: int) -> tuple[Path, Path]:
    templates, responses = make_data(count, seed, large_every)
    corpus, recording = folder / "corpus.yaml", folder / "responses.jsonl"
    corpus.write_text(
        yaml.dump(templates, Dumper=yaml.CSafeDumper, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    recording.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in responses), encoding="utf-8"
    )
    return corpus, recording


# ----------------------------------------------------------------------------- the three runs
def our_phases(
    corpus_path: Path, responses_path: Path, results_path: Path | None = None
) -> Callable[[], dict[str, float]]:
    """One timed library run per call; with `results_path`, its results and aggregates are written there
    as JSON (to compare two versions' outputs byte for byte)."""

    def run() -> dict[str, float]:
        start = time.process_time()
        corpus = load_corpus(corpus_path)
        responses = load_responses(responses_path)
        loaded = time.process_time()
        results = run_evaluation(corpus, responses, steps_scope="all_groups")
        scored = time.process_time()
        aggregates = compute_aggregates(results)
        phases = {"load": loaded - start, "score": scored - loaded, "aggregate": time.process_time() - scored}
        if results_path is not None:
            outputs = {"results": results, "aggregates": aggregates}
            results_path.write_text(json.dumps(outputs, sort_keys=True, default=str), encoding="utf-8")
        return phases

    return run


# Run by graphrag-eval's interpreter: argv = corpus, responses, runs, whether to time `yaml.safe_load`
# too ("1" or "0"); prints the median seconds per phase.
THEIR_TIMER = """
import asyncio, json, statistics, sys, time, yaml
from graphrag_eval import compute_aggregates, run_evaluation
corpus_path, responses_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
phases = {"load": [], "score": [], "aggregate": [], "total": []}
for _ in range(runs):
    start = time.process_time()
    with open(corpus_path, encoding="utf-8") as handle:
        corpus = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    with open(responses_path, encoding="utf-8") as handle:
        responses = {r["question_id"]: r for r in map(json.loads, filter(str.strip, handle))}
    loaded = time.process_time()
    results = asyncio.run(run_evaluation(corpus, responses))
    scored = time.process_time()
    compute_aggregates(results)
    done = time.process_time()
    phases["load"].append(loaded - start)
    phases["score"].append(scored - loaded)
    phases["aggregate"].append(done - scored)
    phases["total"].append(done - start)
measured = {k: statistics.median(v) for k, v in phases.items()}
if sys.argv[4] == "1":
    start = time.process_time()
    with open(corpus_path, encoding="utf-8") as handle:
        yaml.safe_load(handle)
    measured["safe_load"] = time.process_time() - start
print(json.dumps(measured))
"""


def their_phases(
    python: str, corpus: Path, responses: Path, runs: int, *, pure_python_load: bool = False
) -> dict[str, float]:
    """graphrag-eval's median CPU seconds per phase; with `pure_python_load`, also `safe_load`'s."""
    arguments = [str(corpus), str(responses), str(runs), str(int(pure_python_load))]
    return phases_printed_by([python, "-c", THEIR_TIMER, *arguments], "graphrag-eval's interpreter")


def phases_printed_by(
    command: list[str], who: str, environment: dict[str, str] | None = None
) -> dict[str, float]:
    """The seconds per phase a timing script printed as JSON on its last line, run in a fresh process."""
    completed = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise SystemExit(f"{who} failed:\n{completed.stderr[-2000:]}")
    phases: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return phases


def pytest_seconds(folder: Path) -> tuple[float, float]:
    """CPU and wall seconds of one whole replay run of the plugin on the files, in a fresh process
    (questions that fail their thresholds are expected).

    Bytecode caching is left on, as users have it: where it is off (PYTHONDONTWRITEBYTECODE), every
    pytest process compiles and assertion-rewrites each module of every installed pytest plugin's
    distribution again, seconds that have nothing to do with the questions. A run on `warmup/`
    (a few questions) fills those caches first.
    """
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    run_pytest(folder / "warmup", environment)
    cpu_before = children_cpu_seconds()
    start = time.perf_counter()
    run_pytest(folder, environment)
    return children_cpu_seconds() - cpu_before, time.perf_counter() - start


def run_pytest(folder: Path, environment: dict[str, str]) -> None:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0"]
    command += ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
    command += ["--graphrag-steps-scope", "all_groups", "--graphrag-report", "report.json"]
    completed = subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
    if completed.returncode not in (0, 1):  # 1: some questions scored below their thresholds
        raise SystemExit(f"the pytest run failed (exit {completed.returncode}):\n{completed.stdout[-2000:]}")


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a small corpus, one run, no budgets (for CI)")
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument(
        "--runs", type=int, default=3, help="runs per side; the median of each phase is shown"
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--graphrag-eval-python",
        default=os.environ.get("GRAPHRAG_EVAL_PYTHON"),
        help="a Python with graphrag-eval 6.6.1 installed (default: $GRAPHRAG_EVAL_PYTHON)",
    )
    parser.add_argument("--keep", type=Path, help="write the files into this folder and keep them")
    parser.add_argument(
        "--pure-python-load",
        action="store_true",
        help="also time graphrag-eval's corpus read with the pure-Python yaml.safe_load (minutes)",
    )
    parser.add_argument(
        "--results", type=Path, help="write our library run's results and aggregates here (JSON)"
    )
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    count, runs = (300, 1) if args.quick else (args.questions, args.runs)
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        corpus, responses = write_files(folder, count, args.seed, 40 if args.quick else LARGE_EVERY)
        (folder / "warmup").mkdir(exist_ok=True)
        write_files(folder / "warmup", 20, args.seed, LARGE_EVERY)
        sizes = (
            f"corpus {corpus.stat().st_size / 1e6:.1f} MB, responses {responses.stat().st_size / 1e6:.1f} MB"
        )
        print(f"typical KGQA data: {count} questions (seed {args.seed}), {sizes}; median of {runs} run(s)")
        ours = median_phases(our_phases(corpus, responses, args.results), runs)
        theirs = None
        if args.graphrag_eval_python:
            theirs = their_phases(
                args.graphrag_eval_python, corpus, responses, runs, pure_python_load=args.pure_python_load
            )
        pytest_cpu, pytest_wall = pytest_seconds(folder)
    print(f"CPU seconds {'ours':>19} {'graphrag-eval':>14} {'theirs/ours':>12}")
    for phase in ("load", "score", "aggregate", "total"):
        line = f"{'library ' + phase:>22} {ours[phase]:>8.2f}s"
        if theirs is not None:
            line += f" {theirs[phase]:>13.2f}s {theirs[phase] / ours[phase]:>11.2f}x"
        print(line)
    line = f"{'pytest run (-n 0)':>22} {pytest_cpu:>8.2f}s"
    if theirs is not None:
        ratio = theirs["total"] / pytest_cpu
        line += f" {theirs['total']:>13.2f}s {ratio:>11.2f}x  (their library run)"
    print(line + f"; wall {pytest_wall:.2f}s")
    if theirs is not None and "safe_load" in theirs:
        print(
            f"(graphrag-eval's corpus read with yaml.safe_load, the pure-Python loader it uses for its own "
            f"config files, instead of CSafeLoader: {theirs['safe_load']:.2f}s)"
        )
    if theirs is None:
        print("graphrag-eval: skipped (no --graphrag-eval-python / GRAPHRAG_EVAL_PYTHON)")
        return 0
    if args.quick:
        return 0
    verdicts = [theirs[phase] / ours[phase] >= SPEEDUP_BUDGET for phase in ("total", "load")]
    for phase, met in zip(("library run", "load alone"), verdicts, strict=True):
        print(
            f"budget {phase} >= {SPEEDUP_BUDGET:.0f}x faster than graphrag-eval: "
            + ("OK" if met else "EXCEEDED")
        )
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
