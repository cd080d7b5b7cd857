"""Differential benchmark: random step cases scored by graphrag-eval 6.6.1 and by the plugin.

Cases (seeded) cover SPARQL SELECT, ASK, iri_discovery, retrieval,
retrieve_time_series and retrieve_data_points steps, each a one-question
corpus with its response, scored with graphrag-eval's group semantics
(`steps_scope="all_groups"`). A disagreement on `status`, `steps_score` or the
`matches` marks counts unless a documented difference
(docs/graphrag-eval-differences.md) explains it; the explained ones are
counted by reason. The count of unexplained disagreements must be 0.

Full mode needs an interpreter with graphrag-eval 6.6.1 (Python 3.12),
`--graphrag-eval-python PATH` or GRAPHRAG_EVAL_PYTHON. graphrag-eval's worst case
for SPARQL comparison is timed by bench_sparql_worst_case.py.
`--quick` (CI, no Python 3.12) scores the committed recorded sample instead.

    python benchmarks/bench_graphrag_eval_differential.py --quick
    python benchmarks/bench_graphrag_eval_differential.py --graphrag-eval-python PATH [--cases 1200]
    python benchmarks/bench_graphrag_eval_differential.py --graphrag-eval-python PATH --write-sample
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timing import announce_quick

from pytest_graphrag_eval.evaluation import run_evaluation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test harnesses
from graphrag_eval_outcome import comparable_outcome

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "conformance" / "graphrag_eval_driver.py"
SAMPLE = Path(__file__).resolve().parent / "data" / "graphrag_eval_differential_sample.json"
SAMPLE_PER_KIND = 12
XSD = "http://www.w3.org/2001/XMLSchema#"
SPARQL_JSON = "application/sparql-results+json"
ANCHOR = "2025-03-01T12:00:00Z"
KINDS = ("select", "ask", "iri_discovery", "retrieval", "time_series", "data_points")

Case = dict[str, Any]


# ----------------------------------------------------------------------------- case generation
def cell_domain(kind: str) -> list[dict[str, str]]:
    """Cells of one column type. Every value of a type has its own prefix or shape, so a row's cells
    never concatenate into another row's text (graphrag-eval compares joined rows; we compare tuples)."""
    if kind == "uri":
        return [{"type": "uri", "value": f"urn:x:{n}"} for n in range(5)]
    if kind == "literal":
        return [{"type": "literal", "value": f"lit-{n}"} for n in range(5)]
    if kind == "integer":
        return [{"type": "literal", "datatype": XSD + "integer", "value": str(10_000 + n)} for n in range(5)]
    if kind == "decimal":  # exact in binary, so float truncation and decimal truncation agree
        return [
            {"type": "literal", "datatype": XSD + "decimal", "value": v} for v in ("1.25", "2.50", "3.75")
        ]
    return [{"type": "literal", "datatype": XSD + "boolean", "value": v} for v in ("true", "false")]


def sparql_select(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def select_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    width = rng.randint(1, 3)
    types = [rng.choice(["uri", "literal", "integer", "decimal", "boolean"]) for _ in range(width)]
    variables = [f"v{index}" for index in range(width)]
    rows = [[rng.choice(cell_domain(kind)) for kind in types] for _ in range(rng.randint(0, 5))]
    reference: dict[str, Any] = {
        "name": "sparql_query",
        "output": sparql_select(variables, rows),
        "output_media_type": SPARQL_JSON,
        "required_columns": rng.choice([variables, rng.sample(variables, rng.randint(1, width)), []]),
    }
    if rng.random() < 0.3:
        reference["ordered"] = rng.random() < 0.5
    if rng.random() < 0.3:
        reference["ignore_duplicates"] = rng.random() < 0.5
    actual_rows = [list(row) for row in rows]
    actual_types = list(types)
    mutation = rng.choice(["same", "shuffle", "extra", "drop", "dup", "cell", "empty", "permute"])
    if mutation == "shuffle":
        rng.shuffle(actual_rows)
    elif mutation == "drop" and actual_rows:
        actual_rows.pop(rng.randrange(len(actual_rows)))
    elif mutation == "dup" and actual_rows:
        actual_rows.append(list(rng.choice(actual_rows)))
    elif mutation == "cell" and actual_rows:
        row, column = rng.randrange(len(actual_rows)), rng.randrange(width)
        actual_rows[row][column] = rng.choice(cell_domain(types[column]))
    elif mutation == "empty":
        actual_rows = []
    order = list(range(width))
    if mutation in ("permute", "extra"):
        rng.shuffle(order)
    actual_rows = [[row[index] for index in order] for row in actual_rows]
    actual_types = [actual_types[index] for index in order]
    actual_vars = [f"a{index}" for index in range(width)]
    if mutation == "extra":
        kind = rng.choice(["uri", "literal", "integer"])
        actual_vars.append("extra")
        actual_rows = [[*row, rng.choice(cell_domain(kind))] for row in actual_rows]
    actual = sparql_step(1, "sparql_query", sparql_select(actual_vars, actual_rows))
    return [[reference]], [actual]


def ask_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    expected = rng.random() < 0.5
    reference = {
        "name": "sparql_query",
        "output": json.dumps({"head": {}, "boolean": expected}),
        "output_media_type": SPARQL_JSON,
        "required_columns": rng.choice([[], ["x"], ["a", "b"]]),
    }
    answer = rng.choice(["ask", "ask", "select", "text"])
    if answer == "ask":
        output = json.dumps({"head": {}, "boolean": rng.random() < 0.5})
    elif answer == "select":
        output = sparql_select(["x"], [[cell_domain("literal")[0]]])
    else:
        output = "true"
    return [[reference]], [sparql_step(1, "sparql_query", output)]


def iri_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    iris = [f"urn:e:{n:03d}" for n in range(8)]
    target = rng.choice(iris)
    reference: dict[str, Any] = {"name": "iri_discovery", "output": target}
    if rng.random() < 0.6:
        reference.update(output_media_type="text/uri", required_columns=["uri"])
    steps = []
    for index in range(rng.randint(1, 3)):
        found = rng.sample(iris, rng.randint(0, 3))
        rows = [
            [{"type": "uri", "value": iri}, {"type": "literal", "value": f"label {iri[-3:]}"}]
            for iri in found
        ]
        name = rng.choice(["autocomplete_search", "sparql_query"])
        steps.append(sparql_step(index + 1, name, sparql_select(["uri", "label"], rows)))
    return [[reference]], steps


def retrieval_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    pool = [f"d{n:02d}" for n in range(12)]
    relevant = rng.sample(pool, rng.randint(1, 6))
    reference = {
        "name": "retrieval",
        "args": {"query": "q", "k": rng.randint(1, 6)},
        "output": json.dumps([{"id": doc_id} for doc_id in relevant]),
    }
    steps = []
    for index in range(1 if rng.random() < 0.8 else 2):
        k = rng.randint(1, 6)
        retrieved = rng.sample(pool, rng.randint(0, min(k + 2, len(pool))))
        output = json.dumps([{"id": doc_id, "text": f"text {doc_id}"} for doc_id in retrieved])
        steps.append(sparql_step(index + 1, "retrieval", output, args={"query": "q", "k": k}))
    return [[reference]], steps


def pick_ids(rng: random.Random, pool: list[str]) -> Any:
    form = rng.choice(["none", "one", "list", "list"])
    if form == "none":
        return None
    if form == "one":
        return rng.choice(pool)
    return rng.sample(pool, rng.randint(1, 3))


def reshaped_ids(rng: random.Random, value: Any) -> Any:
    """The same ids in another form (a one-item list for text, another order for a list)."""
    if isinstance(value, str) and rng.random() < 0.5:
        return [value]
    if isinstance(value, list):
        return rng.sample(value, len(value))
    return value


def time_series_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    meters = ["m1", "m2", "m3", "m4"]
    args = drop_none({"mrid": pick_ids(rng, meters), "limit": rng.choice([None, 5, 10])})
    actual_args = dict(args)
    change = rng.choice(["same", "reshape", "mrid", "limit", "drop_limit", "add_limit"])
    if change == "reshape" and "mrid" in args:
        actual_args["mrid"] = reshaped_ids(rng, args["mrid"])
    elif change == "mrid":
        actual_args["mrid"] = pick_ids(rng, meters)
    elif change == "limit":
        actual_args["limit"] = rng.choice([5, 10, 20])
    elif change == "drop_limit":
        actual_args.pop("limit", None)
    elif change == "add_limit":
        actual_args["limit"] = 50
    actual = sparql_step(1, "retrieve_time_series", "[]", args=drop_none(actual_args))
    actual["execution_timestamp"] = ANCHOR
    return [[{"name": "retrieve_time_series", "args": args}]], [actual]


GRANULARITIES = ["1h", "1hour", "1hours", "1H", "2h", "1d", "1day", "30m", "30minute", "1mo", "1month"]
RELATIVE_TIMES = ["now", "1h-ago", "60m-ago", "3600s-ago", "2d-ago", "48h-ago", "1w-ago", "1h-ahead"]
OFFSETS = {"1h-ago": -3600, "60m-ago": -3600, "3600s-ago": -3600, "2d-ago": -172800, "48h-ago": -172800}


def absolute_time(rng: random.Random, seconds_from_anchor: int) -> str:
    """An ISO 8601 time `seconds_from_anchor` after the anchor, in one of three notations."""
    base = 12 * 3600 + seconds_from_anchor
    day, rest = divmod(base, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    date = f"2025-03-{1 + day:02d}" if day >= 0 else f"2025-02-{28 + 1 + day:02d}"
    notation = rng.choice(["Z", "+00:00", "naive", "+02:00"])
    if notation == "+02:00":
        hours_local = hours + 2
        if hours_local < 24:
            return f"{date}T{hours_local:02d}:{minutes:02d}:{seconds:02d}+02:00"
        notation = "Z"
    suffix = {"Z": "Z", "+00:00": "+00:00", "naive": ""}[notation]
    return f"{date}T{hours:02d}:{minutes:02d}:{seconds:02d}{suffix}"


def pick_time(rng: random.Random) -> Any:
    form = rng.choice(["none", "relative", "relative", "absolute"])
    if form == "none":
        return None
    if form == "relative":
        return rng.choice(RELATIVE_TIMES)
    return absolute_time(rng, -rng.choice([3600, 7200, 86400]))


def equivalent_time(rng: random.Random, value: Any) -> Any:
    """The same instant, or one close to it: another relative spelling or an absolute time near it."""
    if value in OFFSETS and rng.random() < 0.5:
        return rng.choice([name for name, offset in OFFSETS.items() if offset == OFFSETS[value]])
    if value in OFFSETS or value == "now":
        return absolute_time(rng, OFFSETS.get(value, 0) + rng.choice([-90, -61, -60, -30, 0, 45, 60, 61]))
    return value


def data_points_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    series = ["ts1", "ts2", "ts3"]
    args = drop_none(
        {
            "external_id": pick_ids(rng, series) or "ts1",
            "granularity": rng.choice([None, *GRANULARITIES]),
            "aggregates": pick_ids(rng, ["average", "max", "min", "sum"]),
            "start": pick_time(rng),
            "end": rng.choice([None, "now", pick_time(rng)]),
            "limit": rng.choice([None, None, 100]),
        }
    )
    actual_args = dict(args)
    for field in rng.sample(["external_id", "granularity", "aggregates", "start", "end", "limit"], 2):
        if field in ("external_id", "aggregates"):
            actual_args[field] = (
                reshaped_ids(rng, args.get(field)) if rng.random() < 0.7 else pick_ids(rng, series)
            )
        elif field == "granularity":
            actual_args[field] = rng.choice(GRANULARITIES)
        elif field in ("start", "end"):
            actual_args[field] = (
                equivalent_time(rng, args.get(field)) if rng.random() < 0.8 else pick_time(rng)
            )
        else:
            actual_args[field] = rng.choice([None, 100, 200])
    actual_args.setdefault("external_id", "ts1")
    actual = sparql_step(1, "retrieve_data_points", "[]", args=drop_none(actual_args))
    actual["execution_timestamp"] = rng.choice([ANCHOR, "2025-03-01T14:00:00+02:00", "2025-03-01T12:00:00"])
    return [[{"name": "retrieve_data_points", "args": args}]], [actual]


def drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value is not None}


def sparql_step(number: int, name: str, output: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"call_{number}", "name": name, "status": "success", "output": output, **extra}


GENERATORS: dict[str, Callable[[random.Random], tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]]] = {
    "select": select_case,
    "ask": ask_case,
    "iri_discovery": iri_case,
    "retrieval": retrieval_case,
    "time_series": time_series_case,
    "data_points": data_points_case,
}


def make_cases(count: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        reference_steps, actual_steps = GENERATORS[kind](rng)
        if rng.random() < 0.1:
            actual_steps[-1]["status"] = "error"
        key = f"{kind}-{index:05d}"
        question = {"id": key, "question_text": f"case {key}", "reference_steps": reference_steps}
        response = {"question_id": key, "actual_answer": "", "actual_steps": actual_steps}
        cases.append(
            {
                "key": key,
                "kind": kind,
                "corpus": [{"template_id": kind, "questions": [question]}],
                "responses": {key: response},
            }
        )
    return cases


# ----------------------------------------------------------------------------- scoring and comparing
def our_outcome(case: Case) -> dict[str, Any]:
    outcome: dict[str, Any] = comparable_outcome(
        run_evaluation(case["corpus"], case["responses"], steps_scope="all_groups")[0]
    )
    return outcome


def their_outcomes(python: str, cases: list[Case]) -> dict[str, dict[str, Any]]:
    completed = subprocess.run(
        [python, str(DRIVER)], input=json.dumps({"cases": cases}), capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise SystemExit(f"graphrag-eval driver failed under {python}:\n{completed.stderr[-2000:]}")
    output = json.loads(completed.stdout)
    if output["graphrag_eval_version"] != "6.6.1":
        raise SystemExit(f"{python} has graphrag-eval {output['graphrag_eval_version']}, not 6.6.1")
    return {key: outcomes[key] for key, outcomes in output["outcomes"].items()}


def agree(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    for key in ("outcome", "status", "matches"):
        if ours.get(key) != theirs.get(key):
            return False
    left, right = ours.get("steps_score"), theirs.get("steps_score")
    if isinstance(left, float) and isinstance(right, float):
        return math.isclose(left, right, abs_tol=1e-9)
    return left == right


def documented_reason(case: Case, theirs: dict[str, Any]) -> str | None:
    """The documented difference that explains a disagreement on this case, if one applies."""
    if theirs["outcome"] == "crash":
        return f"crashes: graphrag-eval fails ({theirs['crash'].split(':')[0]}), we score"
    question = case["corpus"][0]["questions"][0]
    reference = question["reference_steps"][-1][0]
    actual_steps = case["responses"][case["key"]]["actual_steps"]
    if reference["name"] == "retrieval":
        relevant = [doc["id"] for doc in json.loads(reference["output"])]
        positive = 0
        for step in actual_steps:
            k = step["args"]["k"]
            retrieved = [doc["id"] for doc in json.loads(step["output"])][:k]
            if set(retrieved) & (set(relevant) - set(relevant[:k])):
                return "step recall: graphrag-eval only credits the first k reference documents"
            positive += step["status"] == "success" and bool(set(retrieved) & set(relevant))
        if positive > 1:
            return "group assignment: graphrag-eval takes the latest match, we take the best"
    return None


def compare(
    cases: list[Case], theirs: dict[str, dict[str, Any]]
) -> tuple[Counter[str], Counter[str], list[str]]:
    """Per kind counts of cases, explained disagreements by reason, and the unexplained case keys."""
    per_kind: Counter[str] = Counter()
    explained: Counter[str] = Counter()
    unexplained: list[str] = []
    for case in cases:
        per_kind[case["kind"]] += 1
        ours, their = our_outcome(case), theirs[case["key"]]
        if agree(ours, their):
            continue
        reason = documented_reason(case, their)
        if reason is None:
            unexplained.append(f"{case['key']}: ours {ours} graphrag-eval {their}")
        else:
            explained[reason] += 1
    return per_kind, explained, unexplained


def report(per_kind: Counter[str], explained: Counter[str], unexplained: list[str]) -> int:
    print("cases: " + ", ".join(f"{kind} {per_kind[kind]}" for kind in KINDS))
    for reason, count in explained.most_common():
        print(f"documented difference, {count} case(s): {reason}")
    for line in unexplained[:10]:
        print("UNEXPLAINED " + line)
    print(f"disagreements outside the documented differences: {len(unexplained)} (must be 0)")
    return 1 if unexplained else 0


# ----------------------------------------------------------------------------- modes
def write_sample(cases: list[Case], theirs: dict[str, dict[str, Any]]) -> None:
    chosen = [case for kind in KINDS for case in [c for c in cases if c["kind"] == kind][:SAMPLE_PER_KIND]]
    sample = {
        "graphrag_eval_version": "6.6.1",
        "cases": chosen,
        "outcomes": {c["key"]: theirs[c["key"]] for c in chosen},
    }
    SAMPLE.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=SAMPLE.parent, delete=False) as handle:
        json.dump(sample, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.chmod(handle.name, 0o644)
    os.replace(handle.name, SAMPLE)
    print(f"wrote {len(chosen)} cases to {SAMPLE.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="score the committed recorded sample (for CI)")
    parser.add_argument("--graphrag-eval-python", default=os.environ.get("GRAPHRAG_EVAL_PYTHON"))
    parser.add_argument("--cases", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=20251)
    parser.add_argument("--write-sample", action="store_true", help="refresh the committed sample")
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    if args.quick:
        sample = json.loads(SAMPLE.read_text(encoding="utf-8"))
        print(
            f"recorded sample: {len(sample['cases'])} cases, graphrag-eval {sample['graphrag_eval_version']}"
        )
        return report(*compare(sample["cases"], sample["outcomes"]))
    if not args.graphrag_eval_python:
        parser.error(
            "full mode needs --graphrag-eval-python PATH (or GRAPHRAG_EVAL_PYTHON); use --quick without"
        )
    cases = make_cases(args.cases, args.seed)
    start = time.perf_counter()
    theirs = their_outcomes(args.graphrag_eval_python, cases)
    print(
        f"graphrag-eval 6.6.1 scored {len(cases)} cases in {time.perf_counter() - start:.1f} s "
        f"(seed {args.seed})"
    )
    status = report(*compare(cases, theirs))
    if args.write_sample:
        write_sample(cases, theirs)
    return status


if __name__ == "__main__":
    sys.exit(main())
