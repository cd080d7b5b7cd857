"""Record what graphrag-eval 6.6.1 itself makes of each config file in this folder.

Run it with a Python 3.12 that has graphrag-eval 6.6.1 installed (no LLM extra needed: only the
config model is used, nothing is sent anywhere):

    python3.12 -m venv ge-venv && ge-venv/bin/pip install graphrag-eval==6.6.1
    ge-venv/bin/python tests/data/graphrag_eval_configs/record_verdicts.py

It writes graphrag_eval_verdicts.json next to itself: per file, whether graphrag-eval accepts it and,
when it does, which answer metrics it switches on and which custom output keys it defines. The
correctness prompt is checked with the same placeholder test graphrag-eval applies when it builds
its evaluator. tests/test_graphrag_eval_config.py compares our translation with these verdicts.
It also records the parameters of graphrag-eval's run_evaluation and compute_aggregates, which
tests/test_api_compat.py compares with ours.
"""

from __future__ import annotations

import inspect
import json
import sys
from importlib.metadata import version
from pathlib import Path

from graphrag_eval import compute_aggregates, run_evaluation
from graphrag_eval.answer_correctness import AnswerCorrectnessEvaluator
from graphrag_eval.evaluation import Config

HERE = Path(__file__).parent


def describe(error: Exception) -> str:
    """The error's type and message; for a pydantic error, where (a dotted key path) and what."""
    details = getattr(error, "errors", None)
    if callable(details):
        return "; ".join(
            f"{'.'.join(map(str, item['loc'])) or '<root>'}: {item['msg']}" for item in details()
        )
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"


def verdict(path: Path) -> dict[str, object]:
    try:
        config = Config.parse(path)
    except Exception as error:  # pydantic ValidationError, or TypeError for a non-mapping file
        return {"accepted": False, "error": describe(error)}
    correctness = config.answer_correctness
    if correctness is not None and correctness.enabled:
        check_prompt = AnswerCorrectnessEvaluator._AnswerCorrectnessEvaluator__validate_prompt_template
        try:
            check_prompt(correctness.prompt)
        except Exception as error:
            return {"accepted": False, "error": describe(error)}
    return {
        "accepted": True,
        "answer_correctness": bool(correctness and correctness.enabled and config.llm),
        "answer_relevance": bool(config.answer_relevance and config.answer_relevance.enabled),
        "llm_metrics": config.llm is not None,
        "custom_output_keys": sorted(key for item in config.custom_evaluations or [] for key in item.outputs),
    }


def api() -> dict[str, object]:
    """Parameter names and defaults of the two public functions, and whether each is a coroutine."""
    described = {}
    for function in (run_evaluation, compute_aggregates):
        parameters = inspect.signature(function).parameters.values()
        described[function.__name__] = {
            "coroutine": inspect.iscoroutinefunction(function),
            "parameters": [
                {"name": item.name, "required": item.default is inspect.Parameter.empty}
                for item in parameters
            ],
        }
    return described


def main() -> None:
    verdicts = {path.name: verdict(path) for path in sorted(HERE.glob("*.yaml"))}
    python = sys.version.split()[0]
    record = {
        "note": f"graphrag-eval {version('graphrag-eval')} on Python {python}, by record_verdicts.py",
        "verdicts": verdicts,
        "api": api(),
    }
    target = HERE / "graphrag_eval_verdicts.json"
    target.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(verdicts)} verdicts to {target.name}")


if __name__ == "__main__":
    main()
