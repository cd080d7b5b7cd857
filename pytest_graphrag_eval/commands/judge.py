"""Console script `graphrag-eval-judge`: calibrate the judge against people's labels, outside pytest.

The judge is the one a pytest run with the same answers config would use, so a pipeline can check a
new judge before trusting it (exit 1 when a `judge:` gate fails, 2 on bad input).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pytest_graphrag_eval.answers.judge_settings import JudgeOptions, resolve_judge_settings
from pytest_graphrag_eval.commands import Argument, add_arguments, add_no_cache
from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.errors import CommandError, ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.options.files import check_files
from pytest_graphrag_eval.report.judging_summary import calibration_lines
from pytest_graphrag_eval.run.judging import (
    calibrate,
    judge_gate_results,
    load_judging,
    plan_line,
    questions_of,
)

PROG = "graphrag-eval-judge"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 agreed, 1 a judge gate failed, 2 bad input)."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except GraphragEvalError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    read = [("--labels", args.labels), ("--reviews", args.reviews), ("--answers-config", args.answers_config)]
    check_files([("--report", args.report)], [*read, *(("--corpus", path) for path in args.corpus)])
    gates = args.gate
    not_judge = [gate.expression for gate in gates if gate.over != "judge"]
    if not_judge:
        raise ConfigurationError(f"--gate {not_judge[0]}: this command checks judge:METRIC.STAT gates only")
    layer = JudgeOptions(judge=args.judge, judge_model=args.judge_model, use_cache=args.use_cache)
    settings = resolve_judge_settings([layer], args.answers_config)
    corpora = [load_corpus(path) for path in args.corpus]
    judging = load_judging(
        labels_path=args.labels,
        reviews_path=args.reviews,
        shown=str,
        questions=questions_of(corpora),
        answers=settings.answers,
    )
    if args.dry_run:
        print(plan_line(judging, settings.answers))
        return 0
    from pytest_graphrag_eval.llm import JudgeClient  # the OpenAI SDK: only when calls are made

    section = calibrate(judging, settings.answers, JudgeClient(settings.llm), [args.threshold])
    for line in calibration_lines(section):
        print(line)
    if args.report is not None:
        text = json.dumps({"judge_calibration": section}, indent=2, ensure_ascii=False) + "\n"
        try:
            write_text_atomic(args.report, text)
        except OSError as error:
            raise CommandError(f"--report {args.report}: {error.strerror or error}") from None
        print(f"wrote {args.report}")
    results = judge_gate_results(gates, section)
    for result in results:
        print(("PASS  " if result.passed else "FAIL  ") + result.message)
    return 1 if any(not result.passed for result in results) else 0


_ARGUMENTS: tuple[Argument, ...] = (
    ("--corpus", "graphrag_corpus", "corpus file (repeatable)", {"required": True}),
    ("--labels", "graphrag_judge_labels", "labels file (YAML or JSONL)", {"required": True}),
    ("--reviews", "graphrag_reviews", "reviews file: its verdicts are labels too"),
    ("--answers-config", "graphrag_answers_config", "the answers config the pytest run uses"),
    ("--judge", "graphrag_judge", "correctness judge (over the config)"),
    ("--judge-model", "graphrag_judge_model", "judge model (over the config)"),
    ("--threshold", "graphrag_threshold", "a metric's pass cutoff, e.g. answer_f1>=0.7 (repeatable)"),
    ("--gate", "graphrag_gate", "judge:METRIC.STAT op N (repeatable)"),
    ("--report", "graphrag_report", "write the calibration as JSON here (atomically)"),
    (
        "--dry-run",
        "graphrag_dry_run",
        "say how many judge calls it would make; make none",
        {"default": False},
    ),
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Judge the answers people labelled and report the judge's agreement with them.",
        epilog="The LLM endpoint and key come from OPENAI_API_KEY and OPENAI_BASE_URL (or AZURE_OPENAI_*).",
    )
    add_arguments(parser, _ARGUMENTS)
    add_no_cache(parser, dest="use_cache", default=None)
    return parser
