"""Benchmark: a corpus shaped like a public KGQA benchmark converted to graphrag-eval, against 6.6.1.

`bench_typical_data.py` times data we designed; this one builds (seeded) the shape of a public
text-to-SPARQL benchmark as users convert it, which is where our speed claim was once only a tie:

- 6,140 questions in 30 templates, about 27 MB of YAML written by PyYAML's dumper: each reference
  output is SPARQL JSON as a single-quoted scalar on one line (`''` escapes for the apostrophes
  in labels and queries), from 1 row to 4,269, mostly IRIs of one variable, some typed literals;
- a small metadata mapping per template that every question shares in memory, so the dumper
  writes it once with an anchor and then aliases it (`meta: &id001 {...}` ... `meta: *id001`);
- question texts and labels in many scripts;
- agent variants: identical, renamed variables, shuffled, duplicated, dropped and extra rows, an
  extra column, labels for IRIs, language tags added or dropped, typed literals as plain ones,
  an erroring retry before the good call, and ASK questions answered right, wrong or by a SELECT.

Timed side by side in one process tree, in CPU seconds of the process doing the work, alternating
the two sides run by run (median of `--runs` per phase): our library (`load_corpus` +
`load_responses`, `run_evaluation` with graphrag-eval's group semantics, `compute_aggregates`)
and graphrag-eval 6.6.1 in its own interpreter (LibYAML's `CSafeLoader` + `json`, its
`run_evaluation` and `compute_aggregates`), as in `bench_typical_data.py`, whose helpers it uses.
Budget (issue 31), checked only in full mode: the library run at most 0.5x graphrag-eval's time.

    python benchmarks/bench_kgqa_shape.py --graphrag-eval-python PATH
    python benchmarks/bench_kgqa_shape.py --quick     # small, only checks that it runs (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from bench_typical_data import (
    DBR,
    NAMES,
    WORDS,
    ask_output,
    entity,
    our_phases,
    select_output,
    their_phases,
    typed,
)
from timing import announce_quick

QUESTIONS = 6_140
TEMPLATES = 30
MAX_ROWS = 4_269
SPEEDUP_BUDGET = 2.0
SELECT_VARIANTS = (
    "identical",
    "renamed",
    "shuffled",
    "duplicated_rows",
    "row_dropped",
    "row_extra",
    "extra_column",
    "labels_for_iris",
    "language_tags",
    "plain_literals",
    "error_then_retry",
)
ASK_VARIANTS = ("identical", "opposite", "select_instead", "error_then_retry")
# Texts with apostrophes: PyYAML's single-quoted scalars escape each as ''.
QUESTION_FORMS = (
    "Which {word}s are in {name}?",
    "What is {name}'s {word}?",
    "Give me all {word}s whose country's capital is {name}.",
    "¿Qué {word} está en {name}?",
    "Welche {word} liegen in {name}?",
    "{name} の{word}は何ですか？",
    "Какие {word} находятся в {name}?",
)
PREFIXES = "PREFIX dbo: <http://dbpedia.org/ontology/> PREFIX dbr: <http://dbpedia.org/resource/> "


def row_count(rng: random.Random, large: bool) -> int:
    """Mostly a handful of rows; a tail of long lists up to MAX_ROWS."""
    if large:
        return rng.randint(1_500, MAX_ROWS)
    return min(MAX_ROWS, max(1, int(rng.lognormvariate(1.2, 1.3))))


def base_question(rng: random.Random, index: int) -> dict[str, Any]:
    """One question's reference table (or ASK answer), query and text, before agent variants."""
    name, _ = rng.choice(NAMES)
    word = rng.choice(WORDS)
    text = rng.choice(QUESTION_FORMS).format(word=word.lower(), name=name.replace("_", " "))
    anchor = f"{DBR}{name}"
    keywords = [word.lower(), name]
    kind = rng.random()
    if kind < 0.1:
        query = f"{PREFIXES}ASK {{ <{anchor}> dbo:{word.lower()} ?o . FILTER(lang(?o) = 'en') }}"
        return {
            "kind": "ask",
            "keywords": keywords,
            "text": text,
            "query": query,
            "boolean": rng.random() < 0.6,
        }
    if kind < 0.25:
        shape = rng.choice(["count", "date", "number"])
        value = {
            "count": lambda: typed(str(rng.randint(0, 90_000)), "integer"),
            "date": lambda: typed(f"{rng.randint(1200, 2024)}-{rng.randint(1, 12):02d}-01", "date"),
            "number": lambda: typed(f"{rng.uniform(0, 1e5):.3f}", "decimal"),
        }[shape]()
        query = f"{PREFIXES}SELECT (COUNT(?x) AS ?{shape}) WHERE {{ ?x dbo:location <{anchor}> }}"
        return {
            "kind": "select",
            "keywords": keywords,
            "text": text,
            "query": query,
            "vars": [shape],
            "rows": [[value]],
        }
    count = row_count(rng, large=index % 125 == 124)
    pairs = [entity(rng, index * 10_000 + row) for row in range(count)]
    query = (
        f"{PREFIXES}SELECT DISTINCT ?uri WHERE {{ ?uri dbo:{word.lower()} <{anchor}> . ?uri a dbo:Place }}"
    )
    if rng.random() < 0.2:  # some with labels
        rows = [[iri, label] for iri, label in pairs]
        return {
            "kind": "select",
            "keywords": keywords,
            "text": text,
            "query": query,
            "vars": ["uri", "label"],
            "rows": rows,
        }
    return {
        "kind": "select",
        "keywords": keywords,
        "text": text,
        "query": query,
        "vars": ["uri"],
        "rows": [[iri] for iri, _ in pairs],
    }


def select_variant(rng: random.Random, base: dict[str, Any], variant: str, index: int) -> str:
    variables, rows = list(base["vars"]), [list(row) for row in base["rows"]]
    if variant == "renamed":
        variables = [f"{name}_{rng.choice(['v', 'res'])}" for name in variables]
    elif variant == "shuffled":
        rng.shuffle(rows)
    elif variant == "duplicated_rows":
        rows += rng.sample(rows, k=max(1, len(rows) // 5))
    elif variant == "row_dropped" and len(rows) > 1:
        rows.pop(rng.randrange(len(rows)))
    elif variant == "row_extra":
        iri, label = entity(rng, 10**9 + index)
        rows.append(
            [iri, label][: len(variables)] if variables[0] == "uri" else [dict(rows[0][0], value="0")]
        )
    elif variant == "extra_column":
        variables.append("comment")
        rows = [[*row, {"type": "literal", "value": f"'{row[0]['value'][-12:]}' – note"}] for row in rows]
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
    elif variant == "language_tags":
        rows = [[language_tagged(cell) for cell in row] for row in rows]
    elif variant == "plain_literals":
        rows = [
            [{"type": "literal", "value": cell["value"]} if "datatype" in cell else cell for cell in row]
            for row in rows
        ]
    return select_output(variables, rows)


def language_tagged(cell: dict[str, str]) -> dict[str, str]:
    """A label with its language tag dropped, or a plain literal given one."""
    if cell["type"] != "literal" or "datatype" in cell:
        return cell
    if "xml:lang" in cell:
        return {"type": "literal", "value": cell["value"]}
    return dict(cell, **{"xml:lang": "en"})


def question_and_response(
    rng: random.Random, base: dict[str, Any], variant: str, question_id: str, meta: dict[str, Any], index: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    if base["kind"] == "ask":
        reference = ask_output(base["boolean"])
        actual = {
            "identical": reference,
            "error_then_retry": reference,
            "opposite": ask_output(not base["boolean"]),
            "select_instead": select_output(["o"], [[typed("1", "integer")]]),
        }[variant]
        required: list[str] = []
    else:
        reference = select_output(base["vars"], base["rows"])
        actual = select_variant(rng, base, variant, index)
        required = list(base["vars"])
    question = {
        "id": question_id,
        "question_text": base["text"],
        "source_id": f"kgqa-{index:05d}",
        "keywords": list(base["keywords"]),
        "meta": meta,
        "reference_steps": [
            [
                {
                    "name": "sparql_query",
                    "args": {"query": base["query"]},
                    "output": reference,
                    "output_media_type": "application/sparql-results+json",
                    "required_columns": required,
                }
            ]
        ],
    }
    steps = []
    if variant == "error_then_retry":
        steps.append(
            {
                "id": "call_0",
                "name": "sparql_query",
                "args": {"query": base["query"].replace("SELECT", "SELEC")},
                "status": "error",
                "error": "Error 400: Parse error: Encountered ' <VAR1> '?uri '' at line 1",
            }
        )
    steps.append(
        {
            "id": f"call_{len(steps)}",
            "name": "sparql_query",
            "args": {"query": base["query"]},
            "status": "success",
            "output": actual,
        }
    )
    response = {
        "question_id": question_id,
        "actual_answer": f"{len(base.get('rows', []))} result(s)",
        "actual_steps": steps,
        "input_tokens": rng.randint(500, 6000),
        "output_tokens": rng.randint(20, 400),
        "elapsed_sec": round(rng.uniform(0.3, 12), 3),
    }
    return question, response


def make_data(count: int, templates: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`count` questions (bases times their variants) in `templates` templates, one response each."""
    rng = random.Random(seed)
    per_template = -(-count // templates)
    metas = [
        {"source": "kgqa-benchmark", "split": rng.choice(["train", "test"]), "language": lang, "version": 9}
        for lang in ("en", "de", "ru", "ja", "es", "fr")
    ]
    questions: list[dict[str, Any]] = []
    responses: list[dict[str, Any]] = []
    index = 0
    while len(questions) < count:
        base = base_question(rng, index)
        if base["kind"] == "ask":
            variants = list(ASK_VARIANTS)
        else:
            variants = rng.sample(SELECT_VARIANTS, rng.randint(5, len(SELECT_VARIANTS)))
        meta = metas[(len(questions) // per_template) % len(metas)]
        for variant in variants[: count - len(questions)]:
            question, response = question_and_response(
                rng, base, variant, f"q{index:05d}-{variant}", meta, index
            )
            questions.append(question)
            responses.append(response)
        index += 1
    corpus = [
        {
            "template_id": f"template_{start // per_template:02d}",
            "questions": questions[start : start + per_template],
        }
        for start in range(0, len(questions), per_template)
    ]
    return corpus, responses


def write_files(folder: Path, count: int, templates: int, seed: int) -> tuple[Path, Path]:
    corpus, responses = make_data(count, templates, seed)
    corpus_path, responses_path = folder / "corpus.yaml", folder / "responses.jsonl"
    # One line per scalar, as converters write it (no folding); shared metadata gets anchors and aliases.
    text = yaml.dump(
        corpus,
        Dumper=yaml.CSafeDumper,
        allow_unicode=True,
        sort_keys=False,
        width=2**31 - 1,
        default_flow_style=None,
    )
    corpus_path.write_text(text, encoding="utf-8")
    responses_path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in responses), encoding="utf-8"
    )
    return corpus_path, responses_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a small corpus, one run, no budget (for CI)")
    parser.add_argument("--runs", type=int, default=5, help="runs per side, alternating; medians are shown")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument(
        "--graphrag-eval-python",
        default=os.environ.get("GRAPHRAG_EVAL_PYTHON"),
        help="a Python with graphrag-eval 6.6.1 installed (default: $GRAPHRAG_EVAL_PYTHON)",
    )
    parser.add_argument("--keep", type=Path, help="write the files into this folder and keep them")
    parser.add_argument(
        "--results", type=Path, help="write our library run's results and aggregates here (JSON)"
    )
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    count, templates, runs = (300, 6, 1) if args.quick else (QUESTIONS, TEMPLATES, args.runs)
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        corpus, responses = write_files(folder, count, templates, args.seed)
        lines = corpus.read_bytes().count(b"\n")
        corpus_mb, responses_mb = corpus.stat().st_size / 1e6, responses.stat().st_size / 1e6
        print(
            f"KGQA-shaped data: {count} questions in {templates} templates (seed {args.seed}), corpus "
            f"{corpus_mb:.1f} MB in {lines:,} lines, responses {responses_mb:.1f} MB; "
            f"median of {runs} alternating run(s)"
        )
        ours_run = our_phases(corpus, responses, args.results)
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        for _ in range(runs):
            phases = ours_run()
            phases["total"] = sum(phases.values())
            ours.append(phases)
            if args.graphrag_eval_python:
                theirs.append(their_phases(args.graphrag_eval_python, corpus, responses, 1))
    print(f"CPU seconds {'ours':>19} {'graphrag-eval':>14} {'ours/theirs':>12}")
    ratios = {}
    for phase in ("load", "score", "aggregate", "total"):
        mine = statistics.median(run[phase] for run in ours)
        line = f"{'library ' + phase:>22} {mine:>8.2f}s"
        if theirs:
            other = statistics.median(run[phase] for run in theirs)
            ratios[phase] = mine / other
            line += f" {other:>13.2f}s {ratios[phase]:>11.2f}x"
        print(line)
    if not theirs:
        print("graphrag-eval: skipped (no --graphrag-eval-python / GRAPHRAG_EVAL_PYTHON)")
        return 0
    if args.quick:
        return 0
    met = ratios["total"] <= 1 / SPEEDUP_BUDGET
    print(
        f"budget library run <= {1 / SPEEDUP_BUDGET:.1f}x graphrag-eval's time: "
        + ("OK" if met else "EXCEEDED")
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
