"""Which responses a run scores, with which scorers and contexts, and which runner scores them, decided
once per process, so that a corpus file's bad setting is a `ConfigurationError` naming it before any
question runs; the plugin turns such errors into usage errors."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.adapters.tool_names import tool_names_setting
from pytest_graphrag_eval.compare.repeats import replay_warnings
from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
from pytest_graphrag_eval.corpus.response_records import ResponseRecord
from pytest_graphrag_eval.corpus.responses import key_by_corpus
from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.evaluation import ResponsesCheck, check_responses_match, make_context
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules
from pytest_graphrag_eval.run.configuration import RunConfiguration
from pytest_graphrag_eval.run.passes import RememberedSource, StandInAgent
from pytest_graphrag_eval.run.runner import (
    AgentCall,
    BackgroundRunner,
    InlineRunner,
    LiveSource,
    Prepare,
    QuestionRunner,
    ReplaySource,
    ResponseSource,
)
from pytest_graphrag_eval.scorer_factory import build_scorers
from pytest_graphrag_eval.scoring import ScoringContext

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import JudgeClient
    from pytest_graphrag_eval.llm.judge import Judge

NO_RESPONSES = (
    "pytest-graphrag-eval has no responses to score: pass --graphrag-responses PATH "
    "(or set graphrag_responses in the ini file) to replay recorded responses, or implement "
    "the pytest_graphrag_respond(question, config) hook in conftest.py to call your agent live."
)


@dataclass
class RunAssembly:
    """The process's runner, and what the end of the run reports about its response source."""

    runner: QuestionRunner
    new_runner: Callable[[], QuestionRunner]
    responses_check: ResponsesCheck = field(default_factory=ResponsesCheck)
    stand_in: StandInAgent | None = None  # a dry run's pretend agent (counts the agent calls)
    remembered: RememberedSource | None = None  # a judge batch's agent answers, asked once
    references_only: bool = False  # no responses: each item reports its reference check alone


def replay_attempts(
    responses: Mapping[str, list[ResponseRecord]], corpora: Iterable[Corpus], agent_repeats: int
) -> tuple[dict[str, list[ResponseRecord]], ResponsesCheck]:
    """Recorded responses lined up with the collected corpora: each question's attempts, and what did not
    line up, as warnings for the summary and the report (a `GraphragEvalError` on bad input)."""
    corpora = list(corpora)
    attempts = key_by_corpus(responses, corpora)
    check = check_responses_match((qid for corpus in corpora for qid in corpus.question_ids()), attempts)
    recorded = {question_id: len(attempts_of) for question_id, attempts_of in attempts.items()}
    return attempts, dataclasses.replace(check, extra_warnings=replay_warnings(recorded, agent_repeats))


def scoring_contexts(
    judge: Judge | None,
    steps_scope: str,
    tool_names: Mapping[str, str],
    rules: Mapping[Path, CorpusRules],
    corpora: Mapping[Path, Corpus],
) -> dict[str, ScoringContext]:
    """Each question's context (by id): one per corpus file, shared by its questions; the options'
    `tool_names` win over a corpus file's, tool by tool."""
    contexts: dict[str, ScoringContext] = {}
    for path, corpus in rules.items():
        source = f"{corpus.file}: settings"
        scoring = dict(corpus.scoring)
        scoring["tool_names"] = {**tool_names_setting(scoring.get("tool_names"), source), **tool_names}
        context = make_context(steps_scope, judge, scoring, source=source)
        contexts.update(dict.fromkeys(corpora[path].positions, context))
    return contexts


def assemble_run(
    options: RunConfiguration,
    *,
    recorded: Mapping[str, Sequence[ResponseRecord]] | None,
    agent: AgentCall | None,
    judge: JudgeClient | None,
    rules: Mapping[Path, CorpusRules],
    corpora: Mapping[Path, Corpus],
    prepare: Prepare | None,
) -> RunAssembly:
    """The source (recording, live agent, dry-run stand-in or none), the scorers and the runner."""
    responses_check = ResponsesCheck()
    stand_in: StandInAgent | None = None
    references_only = False
    if recorded is not None:
        try:
            attempts, responses_check = replay_attempts(
                {key: list(value) for key, value in recorded.items()}, corpora.values(), options.agent_repeats
            )
        except GraphragEvalError as error:
            shown = str(error)
            if options.responses_path is not None and str(options.responses_path) not in shown:
                shown = f"{options.responses_path}: {shown}"  # loader errors already name the file
            raise ConfigurationError(shown) from None
        source: ResponseSource = ReplaySource(attempts)
    elif agent is not None and options.llm.dry_run:
        source = stand_in = StandInAgent()  # a dry run asks no agent
    elif agent is not None:
        source = LiveSource(agent, options.agent_concurrency, options.agent_timeout)
    elif options.references_only_allowed:
        source, references_only = ReplaySource({}), True
    else:
        raise ConfigurationError(NO_RESPONSES)
    remembered = None
    if options.llm.batch and not options.llm.dry_run:
        source = remembered = RememberedSource(source)  # the agent is asked once for every pass
    contexts = scoring_contexts(judge, options.steps_scope, options.tool_names, rules, corpora)
    scorers = build_scorers(options.answers, judge)

    def context_for(question: Question) -> ScoringContext:
        return contexts[question.question_id]

    on_close = judge.aclose if judge is not None else None
    # Something to wait on (the agent, a judge) runs in the background; a plain replay inline.
    runner_type = BackgroundRunner if source.live or on_close is not None else InlineRunner

    def make(
        runner: type[QuestionRunner], close: Callable[[], Coroutine[Any, Any, None]] | None
    ) -> QuestionRunner:
        return runner(source, scorers, context_for, close, options.agent_repeats, prepare)

    return RunAssembly(
        make(runner_type, on_close),
        lambda: make(BackgroundRunner, None),
        responses_check,
        stand_in,
        remembered,
        references_only,
    )
