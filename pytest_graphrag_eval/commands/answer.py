"""Console script `answer-correctness`: judge a TSV of answers, as graphrag-eval's command does.

    answer-correctness -i in.tsv -o out.tsv [--judge llm|lexical] [--model gpt-4o-mini]

The output has the input's columns plus the correctness keys, replaced atomically. A module of its
own, so that `graphrag-eval-merge` does not import the answer judges.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.answers import AnswerInputs, AnswerJudgeScorer, AnswerSettings, build_answer_metrics
from pytest_graphrag_eval.answers.claims import CORRECTNESS_KEYS
from pytest_graphrag_eval.commands import Argument, add_arguments, add_no_cache
from pytest_graphrag_eval.corpus.input_files import read_input_text
from pytest_graphrag_eval.errors import CommandError, GraphragEvalError, InputError, SourceLocation
from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.options.declarations import OptionSpec
from pytest_graphrag_eval.options.files import check_files

INPUT_COLUMNS = ("Question", "Reference answer", "Actual answer")
OUTPUT_COLUMNS = (
    *CORRECTNESS_KEYS,
    "answer_eval_error",
    "answer_judge",
    "answer_eval_input_tokens",
    "answer_eval_output_tokens",
    "answer_eval_cost",
)


def answer_correctness_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `answer-correctness`; returns the exit status (2 on bad input)."""
    args = _parser().parse_args(argv)
    try:
        check_files([("--output", args.output)], [("--input", args.input)])  # before a judge call is paid
        header, rows = read_rows(args.input)
        results = asyncio.run(judge_rows(rows, args))
        write_rows(args.output, header, rows, results)
    except GraphragEvalError as error:
        print(f"answer-correctness: error: {error}", file=sys.stderr)
        return 2
    failed = sum(1 for result in results if "answer_eval_error" in result)
    cost = sum(result.get("answer_eval_cost", 0.0) for result in results)
    print(
        f"answer-correctness: judged {len(rows)} rows ({failed} errors, judge cost ${cost:.4f}); "
        f"wrote {args.output}",
        file=sys.stderr,
    )
    return 0


_TSV_FILE = OptionSpec("--file", "", metavar="PATH", parse=P.path)
_ARGUMENTS: tuple[Argument, ...] = (
    ("--input", _TSV_FILE, "input TSV file", {"short": "-i", "required": True}),
    ("--output", _TSV_FILE, "output TSV file (replaced atomically)", {"short": "-o", "required": True}),
    (
        "--judge",
        "graphrag_judge",
        "claims judge (default llm)",
        {"choices": ("llm", "lexical"), "default": "llm"},
    ),
    ("--model", "graphrag_judge_model", None, {"dest": "model"}),
    ("--prompt-file", "graphrag_correctness_prompt", "prompt template replacing the default (llm judge)"),
    ("--concurrency", "graphrag_concurrency", "judge calls at once (default 8)"),
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="answer-correctness",
        description=f"Judge the correctness of answers in a TSV file (columns: {', '.join(INPUT_COLUMNS)}).",
        epilog="The LLM endpoint and key come from OPENAI_API_KEY and OPENAI_BASE_URL (or AZURE_OPENAI_*).",
    )
    add_arguments(parser, _ARGUMENTS)
    add_no_cache(parser, dest="use_cache", default=True)
    return parser


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a TSV file that has the three input columns; a repeated column or a row
    whose cells do not fit the header is an error naming the line, never a cell dropped or misread."""
    shown = str(path)
    reader = csv.reader(io.StringIO(read_input_text(path, what="TSV file"), newline=""), delimiter="\t")
    try:
        header = next(reader, [])
        repeated = next((column for column in header if header.count(column) > 1), None)
        if repeated is not None:
            raise InputError("the column appears twice in the header", SourceLocation(shown, 1), repeated)
        missing = [column for column in INPUT_COLUMNS if column not in header]
        if missing:
            found = ", ".join(repr(column) for column in header) or "none"
            raise CommandError(f"{shown}: missing column(s) {', '.join(map(repr, missing))} (found: {found})")
        rows = []
        for cells in filter(None, reader):  # blank lines skipped
            if len(cells) != len(header):
                field = header[len(cells)] if len(cells) < len(header) else None
                raise InputError(
                    f"{len(cells)} cells where the header has {len(header)} columns (a stray quote or tab?)",
                    SourceLocation(shown, reader.line_num),
                    field,
                )
            rows.append(dict(zip(header, cells, strict=True)))
    except csv.Error as error:
        raise InputError(str(error), SourceLocation(shown, reader.line_num)) from None
    return header, rows


async def judge_rows(rows: list[dict[str, str]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Correctness keys for every row, judged concurrently."""
    settings = AnswerSettings(
        judge=args.judge, correctness_prompt_file=args.prompt_file, judge_model=args.model
    )
    client = None
    if settings.needs_llm:
        from pytest_graphrag_eval.llm import JudgeClient, LLMSettings

        overrides: dict[str, Any] = {"use_cache": args.use_cache}
        if args.model:
            overrides["model"] = args.model
        if args.concurrency is not None:
            overrides["concurrency"] = args.concurrency
        client = JudgeClient(LLMSettings.from_env(**overrides))
    scorer = AnswerJudgeScorer(build_answer_metrics(settings, client))
    try:
        return list(
            await asyncio.gather(
                *(
                    scorer.score_inputs(
                        AnswerInputs(row["Question"], row["Reference answer"], row["Actual answer"])
                    )
                    for row in rows
                )
            )
        )
    finally:
        if client is not None:
            await client.aclose()


def write_rows(
    path: Path, header: list[str], rows: list[dict[str, str]], results: list[dict[str, Any]]
) -> None:
    """The input columns (earlier result columns dropped) plus the correctness keys, as TSV."""
    columns = [column for column in header if column not in OUTPUT_COLUMNS] + list(OUTPUT_COLUMNS)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(
        buffer, fieldnames=columns, delimiter="\t", extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for row, result in zip(rows, results, strict=True):
        writer.writerow({**row, **{key: _cell(result.get(key)) for key in OUTPUT_COLUMNS}})
    try:
        write_text_atomic(path, buffer.getvalue())
    except OSError as error:
        raise CommandError(f"{path}: cannot write it: {error}") from None


def _cell(value: object) -> str:
    return "" if value is None else str(value)
