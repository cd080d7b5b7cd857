"""`graphrag-eval-corpus`: a reference corpus generated from a template file over a knowledge graph,
and the graph's coverage by a corpus's reference queries.

When `--out` exists, its questions are tried first (so they survive while the graph still supports
them) and the new, updated and retired ones are listed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.commands import add_no_cache
from pytest_graphrag_eval.corpus.reference_corpus import Question, load_corpus
from pytest_graphrag_eval.errors import CommandError, GraphragEvalError, InputError
from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.formats.terminal_text import terminal_safe
from pytest_graphrag_eval.gates.thresholds import thresholds_from_yaml
from pytest_graphrag_eval.generate.coverage import corpus_coverage, coverage_lines, graph_terms
from pytest_graphrag_eval.generate.generator import Generation, generate, plan
from pytest_graphrag_eval.generate.paraphrase import ParaphraseRun, paraphrase
from pytest_graphrag_eval.generate.regeneration import Changes, compare
from pytest_graphrag_eval.generate.templates import TemplateFile, load_templates
from pytest_graphrag_eval.graph.endpoint import SparqlEndpoint
from pytest_graphrag_eval.graph.factory import open_endpoint
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.options.command_line import FLAG, add_option, declared
from pytest_graphrag_eval.options.declarations import OptionSpec
from pytest_graphrag_eval.options.files import check_files
from pytest_graphrag_eval.report.html_report.render import coverage_page

if TYPE_CHECKING:  # the LLM client (and the OpenAI SDK) is imported only when paraphrases are asked for
    from pytest_graphrag_eval.llm.client import JudgeClient

PROG = "graphrag-eval-corpus"
SHOWN_IDS = 20


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2: bad input, named in the message)."""
    args = _parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except GraphragEvalError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2


MAX_PARAPHRASES = 1000
"""The most LLM variants per phrasing (the bound catches a typo, as the plugin's counts do)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("generate", help="write a reference corpus from a template file")
    made.add_argument("templates", type=Path, help="the template file (YAML)")
    _endpoint_option(made)
    out = OptionSpec("--out", "", parse=P.path)
    add_option(made, "--out", out, help="the corpus file to write (compared with it if it exists)")
    add_option(made, "--dry-run", FLAG, help="list what would be generated; write nothing")
    count = OptionSpec("--paraphrases", "", metavar="N", parse=P.whole_number(0, MAX_PARAPHRASES))
    add_option(made, "--paraphrases", count, default=0, help="LLM variants per phrasing")
    for flag, key, text in (
        ("--judge-model", "graphrag_judge_model", "the LLM for paraphrases and checks (default gpt-4o-mini)"),
        ("--max-cost-usd", "graphrag_max_cost", "stop paraphrasing before spending more"),
        ("--max-calls", "graphrag_max_calls", "stop paraphrasing after this many LLM calls"),
    ):
        add_option(made, flag, declared(key), help=text)
    add_no_cache(made, dest="use_cache", default=True)
    made.set_defaults(handler=_generate)
    covered = commands.add_parser(
        "coverage", help="the graph's classes and properties no reference query names"
    )
    covered.add_argument("corpora", type=Path, nargs="+", help="corpus files")
    _endpoint_option(covered)
    add_option(covered, "--json", FLAG, help="print the coverage as JSON")
    shown = OptionSpec("--shown", "", metavar="N", parse=P.whole_number(0, 1_000_000))
    add_option(covered, "--shown", shown, default=10, help="untested terms listed (default 10)")
    add_option(covered, "--html", declared("graphrag_html"), help="also write the coverage as an HTML page")
    covered.set_defaults(handler=_coverage)
    return parser


def _endpoint_option(parser: argparse.ArgumentParser) -> None:
    add_option(
        parser,
        "--sparql-endpoint",
        declared("graphrag_sparql_endpoint"),
        help="an RDF file or folder, or a SPARQL URL",
        required=True,
    )


def _generate(args: argparse.Namespace) -> int:
    """The template file is checked before the graph is loaded or any LLM call is made."""
    if args.out is None and not args.dry_run:
        raise CommandError("--out is required (or --dry-run to only list what would be generated)")
    check_files([("--out", args.out)], [("the template file", args.templates)])
    templates = load_templates(args.templates)
    for template in templates.templates:  # copied into the corpus: refused now, not at its first test run
        thresholds_from_yaml(template.thresholds, "template", template.location)
        for ident, value in template.question_thresholds.items():
            thresholds_from_yaml(value, "question", template.location.for_question(ident))
    previous = _previous(args.out)
    with contextlib.closing(open_endpoint(args.sparql_endpoint, base_dir=Path.cwd())) as endpoint:
        phrasings = None
        if args.paraphrases:
            run = _paraphrases(args, templates)
            if run is None:
                return 0
            phrasings = run.phrasings(templates.templates)
        if args.dry_run:
            _print_plan(templates, endpoint)
            return 0
        generation = generate(
            templates,
            endpoint,
            previous_ids={question.question_id for question in previous},
            phrasings=phrasings,
        )
        if not generation.questions():
            raise CommandError(
                f"{args.templates}: no template gave a question; nothing written to {args.out}"
            )
        generation.write(args.out, args.templates.name)
        _print_generation(generation, compare(previous, generation) if previous else None, args.out)
        return 0


def _previous(out: Path | None) -> list[Question]:
    """The questions of the corpus `--out` replaces, only if generated: nothing written by hand is lost."""
    if out is None or not out.exists():
        return []
    questions = list(load_corpus(out).questions())
    for question in questions:
        if "provenance" not in question.extra:
            message = "has no provenance (it was written by hand): writing over the file would lose it"
            raise InputError(f"{message}; choose another --out", question.location)
    return questions


def _paraphrases(args: argparse.Namespace, templates: TemplateFile) -> ParaphraseRun | None:
    """The estimate, then (unless a dry run) the paraphrases; None when only the estimate was asked for."""
    from pytest_graphrag_eval.llm.client import JudgeClient
    from pytest_graphrag_eval.llm.estimate import estimate_lines
    from pytest_graphrag_eval.llm.settings import LLMSettings

    overrides: dict[str, Any] = {"use_cache": args.use_cache}
    if args.judge_model:
        overrides["model"] = args.judge_model
    planner_client = JudgeClient(LLMSettings.from_env(dry_run=True, **overrides))
    asyncio.run(_paraphrase_with(planner_client, templates, args.paraphrases))
    assert planner_client.planner is not None
    print("paraphrase cost estimate (before any call):")
    for line in estimate_lines(planner_client.planner, planner_client.settings.prices):
        print(f"  {line}")
    if args.dry_run:
        print("dry run: no paraphrase was asked for, no corpus written")
        return None
    client = JudgeClient(
        LLMSettings.from_env(max_cost_usd=args.max_cost_usd, max_calls=args.max_calls, **overrides)
    )
    run = asyncio.run(_paraphrase_with(client, templates, args.paraphrases))
    for entry in run.templates:
        print(f"paraphrases of {entry.template_id}: {len(entry.kept)} kept, {len(entry.rejected)} rejected")
        for variant in entry.kept:  # LLM replies: printed as data
            print(terminal_safe(f"  kept      {variant}"))
        for variant, reason in entry.rejected:
            print(terminal_safe(f"  rejected  {variant}  ({reason})"))
    stats = client.stats
    print(
        f"paraphrase calls: {stats.calls_made} sent, {stats.cache_hits} answered by the cache, "
        f"{stats.budget_refused} refused by the budget, {stats.cost_usd:.4f} USD"
    )
    if run.stopped:
        print(terminal_safe(f"paraphrasing stopped: {run.stopped}"))
    return run


async def _paraphrase_with(client: JudgeClient, templates: TemplateFile, count: int) -> ParaphraseRun:
    try:
        return await paraphrase(client, templates.templates, count)
    finally:
        await client.aclose()


def _print_plan(templates: TemplateFile, endpoint: SparqlEndpoint) -> None:
    total = 0
    for template, candidates, questions in plan(templates, endpoint):
        total += len(questions)
        count = template.sample.count
        wanted = "every candidate" if count is None else f"{count} questions"
        print(f"{template.template_id}: {candidates} candidates, {wanted}")
        for question_id, text in questions:
            print(terminal_safe(f"  {question_id}: {text}"))  # the graph's text: printed as data
    print(f"dry run: {total} questions would be tried; no reference query run, nothing written")


def _print_generation(generation: Generation, changes: Changes | None, out: Path) -> None:
    for outcome in generation.outcomes:
        dropped = f", {len(outcome.dropped)} dropped" if outcome.dropped else ""
        duplicates = f", {outcome.duplicates} duplicates dropped" if outcome.duplicates else ""
        print(
            f"{outcome.template.template_id}: {len(outcome.questions)} questions "
            f"from {outcome.candidates} candidates{dropped}{duplicates}"
        )
        for dropped_binding in outcome.dropped[:SHOWN_IDS]:
            print(terminal_safe(f"  dropped {dropped_binding.question_id}: {dropped_binding.reason}"))
        unused = sorted(
            set(outcome.template.question_thresholds) - {q.question_id for q in outcome.questions}
        )
        if unused:
            print(f"  question_thresholds of no question made: {', '.join(unused)}")
    questions, twins = len(generation.questions()), sum(outcome.duplicates for outcome in generation.outcomes)
    print(f"wrote {out}: {questions} questions, {twins} duplicates dropped, graph {generation.graph}")
    if changes is not None:
        print(
            f"since the previous corpus: {len(changes.unchanged)} unchanged, {len(changes.updated)} updated, "
            f"{len(changes.new)} new, {len(changes.retired)} retired"
        )
        for label, ids in (("updated", changes.updated), ("new", changes.new), ("retired", changes.retired)):
            if ids:
                more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
                print(f"  {label}: {', '.join(ids[:SHOWN_IDS])}{more}")


def _coverage(args: argparse.Namespace) -> int:
    check_files([("--html", args.html)], [("a corpus", path) for path in args.corpora])
    corpora = [load_corpus(path) for path in args.corpora]
    with contextlib.closing(open_endpoint(args.sparql_endpoint, base_dir=Path.cwd())) as endpoint:
        coverage = corpus_coverage(corpora, graph_terms(endpoint))
    if args.json:
        print(json.dumps(coverage.to_dict(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(coverage_lines(coverage, args.shown)))
    if args.html is not None:
        write_text_atomic(args.html, coverage_page(coverage.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
