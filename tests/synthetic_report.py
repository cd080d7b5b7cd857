"""A deterministic synthetic JSON report (format 2) of any size, for HTML report tests and benchmarks.

Questions look like the example project's: an `iri_discovery` group and a
SPARQL group whose reference output is SPARQL results JSON; a failing question's
agent returns a result with one wrong row, so its step diff has missing and
extra rows. A baseline comparison, thresholds, failures and repeated attempts
(some flaky) are filled in as the report schema describes them.
"""

from __future__ import annotations

import json
import random
from typing import Any

from pytest_graphrag_eval.aggregates import compute_aggregates

THRESHOLDS = (("steps_score", ">=", 1.0), ("answer_f1", ">=", 0.8))
METRICS = ("steps_score", "answer_f1", "answer_recall", "answer_precision")


def synthetic_report(questions: int, *, templates: int = 20, seed: int = 0) -> dict[str, Any]:
    """A report with `questions` results spread over `templates` templates, with a comparison section."""
    rng = random.Random(seed)
    results = [
        _result(rng, number, f"template_{number % templates:03d}_ENTITY") for number in range(questions)
    ]
    _flag_regressions(rng, results)
    return {
        "format_version": 2,
        "results": results,
        "aggregates": compute_aggregates(results),
        "gates": [
            _gate("micro:steps_score.mean>=0.9", "steps_score", 0.9, results),
            _gate("micro:answer_f1.mean>=0.8", "answer_f1", 0.8, results),
        ],
        "metadata": {
            "tool": "pytest-graphrag-eval",
            "version": "synthetic",
            "started_at": "2026-01-01T00:00:00Z",
            "duration_sec": 12.5,
            "interrupted": False,
            "questions": questions,
            "responses": "live",
            "steps_scope": "last_group",
            "judge": "llm",
            "judge_model": "judge-model",
        },
        "comparison": _comparison(rng, results),
    }


def sparql_json(variables: list[str], rows: list[list[str]]) -> str:
    """SPARQL 1.1 results JSON with literal bindings."""
    bindings = [
        {name: {"type": "literal", "value": value} for name, value in zip(variables, row, strict=True)}
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def _result(rng: random.Random, number: int, template_id: str) -> dict[str, Any]:
    entity = f"E{number:05d}"
    rows = [[f"{entity}-item-{index}", str(rng.randint(10, 900))] for index in range(rng.randint(2, 5))]
    failing = rng.random() < 0.15
    errored = not failing and rng.random() < 0.02
    actual_rows = [*rows[:-1], [rows[-1][0], str(int(rows[-1][1]) * 2)]] if failing else rows
    call = f"call_{number:08x}"
    result: dict[str, Any] = {
        "template_id": template_id,
        "question_id": f"q{number:05d}",
        "question_text": f"Which items belong to entity {entity}, and what is the size of each?",
        "reference_answer": ", ".join(f"{name} ({size})" for name, size in rows),
        "reference_steps": [
            [{"name": "iri_discovery", "args": {"entity": entity}, "output": f"urn:uuid:{number:032x}"}],
            [
                {
                    "name": "sparql_query",
                    "args": {"query": f"SELECT ?item ?size WHERE {{ ?item :in <urn:uuid:{number:032x}> }}"},
                    "output": sparql_json(["item", "size"], rows),
                    "output_media_type": "application/sparql-results+json",
                    "required_columns": ["item", "size"],
                    **({} if failing or errored else {"matches": call}),
                }
            ],
        ],
        "content_hash": f"sha256:{number:064x}",
    }
    if errored:
        result.update(status="error", error=f"the agent timed out on {entity}", outcome="failed")
        result["failures"] = [result["error"]]
        result["thresholds"] = [_threshold(metric, op, limit, None) for metric, op, limit in THRESHOLDS]
        return result
    f1 = round(rng.uniform(0.4, 0.75), 4) if failing else round(rng.uniform(0.8, 1.0), 4)
    result.update(
        status="success",
        actual_answer="Items: " + ", ".join(f"{name} ({size})" for name, size in actual_rows) + ".",
        actual_steps=[
            {
                "name": "sparql_query",
                "id": call,
                "status": "success",
                "args": {"query": f"SELECT ?item ?size WHERE {{ ?item :partOf <urn:uuid:{number:032x}> }}"},
                "output": sparql_json(["item", "size"], actual_rows),
            }
        ],
        input_tokens=rng.randint(80, 400),
        output_tokens=rng.randint(20, 120),
        elapsed_sec=round(rng.uniform(0.4, 6.0), 3),
        steps_score=0.0 if failing else 1.0,
        answer_f1=f1,
        answer_recall=round(min(1.0, f1 + 0.1), 4),
        answer_precision=round(max(0.0, f1 - 0.05), 4),
        answer_correctness_reason=f"{'some' if failing else 'all'} reference claims found in the answer",
        answer_eval_input_tokens=rng.randint(300, 700),
        answer_eval_output_tokens=rng.randint(30, 90),
        answer_eval_cost=round(rng.uniform(0.0002, 0.0009), 6),
    )
    result["total_tokens"] = result["input_tokens"] + result["output_tokens"]
    result["thresholds"] = [_threshold(metric, op, limit, result[metric]) for metric, op, limit in THRESHOLDS]
    failures = [
        item["expression"] + f" (got {item['actual']})" for item in result["thresholds"] if not item["passed"]
    ]
    result["failures"] = failures
    result["outcome"] = "failed" if failures else "passed"
    if number % 50 == 7:
        verdicts = ["passed", "failed", "passed"] if number % 100 == 7 else ["passed"] * 3
        result["attempts"] = [
            {"outcome": verdict, "steps_score": float(verdict == "passed")} for verdict in verdicts
        ]
    return result


def _threshold(metric: str, op: str, limit: float, actual: float | None) -> dict[str, Any]:
    return {
        "expression": f"{metric}{op}{limit:g}",
        "metric": metric,
        "op": op,
        "limit": limit,
        "actual": actual,
        "passed": actual is not None and actual >= limit,
        "source": "ini",
    }


def _flag_regressions(rng: random.Random, results: list[dict[str, Any]]) -> None:
    """Each question's baseline outcome: most failures are regressions, a few old failures are fixed."""
    for result in results:
        if result["outcome"] == "failed":
            result["_baseline"] = "passed" if rng.random() < 0.7 else "failed"
        else:
            result["_baseline"] = "failed" if rng.random() < 0.03 else "passed"


def _comparison(rng: random.Random, results: list[dict[str, Any]]) -> dict[str, Any]:
    questions = []
    for result in results:
        baseline, current = result.pop("_baseline"), result["outcome"]
        kind = {("passed", "failed"): "regressed", ("failed", "passed"): "fixed"}.get(
            (baseline, current), "unchanged"
        )
        deltas = {}
        for metric in METRICS:
            if metric in result:
                before = 1.0 if kind == "regressed" and metric == "steps_score" else result[metric]
                deltas[metric] = {
                    "baseline": before,
                    "current": result[metric],
                    "delta": result[metric] - before,
                }
        questions.append(
            {
                "question_id": result["question_id"],
                "template_id": result["template_id"],
                "classification": kind,
                "baseline_outcome": baseline,
                "current_outcome": current,
                "deltas": deltas,
            }
        )
    by_kind: dict[str, list[str]] = {}
    for item in questions:
        by_kind.setdefault(item["classification"], []).append(item["question_id"])
    templates = sorted({result["template_id"] for result in results})
    return {
        "baseline": {
            "path": "reports/main.json",
            "started_at": "2025-12-31T00:00:00Z",
            "questions": len(results),
        },
        "confidence": 0.95,
        "resamples": 2000,
        "seed": 0,
        "regressions": by_kind.get("regressed", []),
        **{kind: by_kind.get(kind, []) for kind in ("fixed", "new", "removed", "edited", "unchanged")},
        "questions": questions,
        "metrics": {metric: _delta_stats(rng, len(results)) for metric in METRICS},
        "per_template": {
            template: {metric: _delta_stats(rng, len(results) // len(templates)) for metric in METRICS}
            for template in templates
        },
        "outcomes": {
            "baseline_pass_rate": 0.93,
            "current_pass_rate": 0.86,
            **_delta_stats(rng, len(results), delta=-0.07, test="mcnemar"),
        },
    }


def _delta_stats(
    rng: random.Random, pairs: int, *, delta: float | None = None, test: str = "bootstrap"
) -> dict[str, Any]:
    delta = round(rng.uniform(-0.2, 0.08), 4) if delta is None else delta
    half = round(rng.uniform(0.02, 0.12), 4)
    baseline = round(rng.uniform(0.75, 0.98), 4)
    return {
        "baseline": baseline,
        "current": round(baseline + delta, 4),
        "delta": delta,
        "ci_low": round(delta - half, 4),
        "ci_high": round(delta + half, 4),
        "p_value": round(rng.uniform(0.0005, 0.6), 4),
        "n_pairs": pairs,
        "test": test,
        "min_detectable_delta": round(half * 1.4, 4),
    }


def _gate(expression: str, metric: str, limit: float, results: list[dict[str, Any]]) -> dict[str, Any]:
    values = [result[metric] for result in results if metric in result]
    actual = sum(values) / len(values) if values else None
    return {
        "expression": expression,
        "gate": expression,
        "passed": actual is not None and actual >= limit,
        "actual": actual,
        "scope": "micro",
        "template": None,
        "metric": metric,
        "stat": "mean",
        "op": ">=",
        "limit": limit,
        "change": None,
        "confidence": None,
        "source": "ini",
        "message": "",
    }
