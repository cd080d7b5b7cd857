"""LLM-judged context recall and precision of retrieval steps (graphrag-eval 6.x's `retrieval_answer_*`
and `retrieval_context_*`), on our judge client.

Rules and keys are RAGAS' context recall and precision (docs/graphrag-eval-config.md); keys go on the
judged step as graphrag-eval puts them, and their means on the question for thresholds.
"""

from __future__ import annotations

import asyncio
import copy
import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pytest_graphrag_eval.answers.metric import JudgeFailure, LLMJudgedMetric, gather_all, response_format
from pytest_graphrag_eval.answers.prompts import DATA_RULE, data_block
from pytest_graphrag_eval.answers.result_keys import RETRIEVAL_JUDGE_KEYS
from pytest_graphrag_eval.llm.judge import Judge, Usage
from pytest_graphrag_eval.llm.replies import InvalidReply, flag_field, parse_object, text_field
from pytest_graphrag_eval.scoring import ResultKey, ScoringContext

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question

RETRIEVAL_STEP = "retrieval"
SIDES = ("answer", "context")
MEASURES = ("recall", "precision", "f1")
USAGE_KEYS = ("retrieval_judge_input_tokens", "retrieval_judge_output_tokens", "retrieval_judge_cost")

RECALL_SYSTEM = (
    DATA_RULE + "\n\nYou check how much of a reference is covered by retrieved texts. Split the text in the "
    "<reference> block into its individual statements (one fact each). For every statement decide whether "
    "the <context> blocks together support it: 1 if the statement can be attributed to them, 0 if not. "
    "Reply with one JSON object and nothing else, with the field statements: a list with one entry per "
    "statement, each with the fields statement (text), reason (text) and attributed (0 or 1)."
)
PRECISION_SYSTEM = (
    DATA_RULE + "\n\nYou check whether one retrieved text was useful for arriving at a reference. Decide "
    "whether the text in the <context> block helps to answer the question in the <question> block the way "
    "the <reference> block does. Reply with one JSON object and nothing else, with the fields reason (one "
    "sentence) and useful (1 if the text is useful, 0 if not)."
)
RECALL_PROPERTIES = {
    "statements": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "statement": {"type": "string"},
                "reason": {"type": "string"},
                "attributed": {"type": "integer"},
            },
            "required": ["statement", "reason", "attributed"],
            "additionalProperties": False,
        },
    }
}
PRECISION_PROPERTIES = {"reason": {"type": "string"}, "useful": {"type": "integer"}}


def parse_attributions(text: str) -> list[bool]:
    """The attributed flags of a recall reply; an empty or malformed list is invalid."""
    statements = parse_object(text).get("statements")
    if not isinstance(statements, list) or not statements:
        raise InvalidReply("the field 'statements' must be a non-empty list of statements")
    flags = []
    for index, item in enumerate(statements):
        if not isinstance(item, dict):
            raise InvalidReply(f"statement #{index + 1} must be an object")
        try:
            text_field(item, "statement")
            flags.append(flag_field(item, "attributed"))
        except InvalidReply as problem:
            raise InvalidReply(f"statement #{index + 1}: {problem}") from None
    return flags


def parse_usefulness(text: str) -> bool:
    return flag_field(parse_object(text), "useful")


def average_precision(useful: Sequence[bool]) -> float:
    """Mean of precision@i over the useful ranks i; 0.0 when no text is useful."""
    hits = 0
    total = 0.0
    for rank, flag in enumerate(useful, start=1):
        if flag:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def f1(recall: float, precision: float) -> float:
    return 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)


def context_texts(output: object) -> list[str]:
    """The `text` of each document of a retrieval step output (JSON text or a parsed list), in rank order."""
    items = output
    if isinstance(output, str):
        try:
            items = json.loads(output)
        except (ValueError, RecursionError):
            raise ValueError("the output is not JSON") from None
    if not isinstance(items, list):
        raise ValueError("the output must be a JSON list of documents")
    texts = []
    for index, item in enumerate(items):
        text = item.get("text") if isinstance(item, Mapping) else None
        if not isinstance(text, str):
            raise ValueError(f"document #{index + 1} has no 'text'")
        texts.append(text)
    return texts


@dataclass(frozen=True)
class Judgment:
    """One side (answer or context) of one actual step: what to judge against what."""

    step_index: int
    side: str
    reference: str
    contexts: list[str] | None  # None: the step's output could not be read
    problem: str = ""


class StepMatch(Protocol):
    """Reference step `reference_index` of group `group_index` paired with actual step `actual_index`."""

    @property
    def group_index(self) -> int: ...
    @property
    def reference_index(self) -> int: ...
    @property
    def actual_index(self) -> int: ...
    @property
    def score(self) -> float: ...


StepMatcher = Callable[
    [Sequence[Sequence[Mapping[str, Any]]], Sequence[Mapping[str, Any]]], Sequence[StepMatch]
]
"""The step matching of every reference group (the steps scorer's, given by the scorer factory:
`answers` may not import `steps`)."""


class RetrievalJudgeScorer(LLMJudgedMetric):
    """Judges the retrieval steps of a response; `match_steps` pairs actual and reference steps."""

    name = "retrieval_judge"
    produces: ClassVar[tuple[ResultKey, ...]] = RETRIEVAL_JUDGE_KEYS

    def __init__(
        self,
        client: Judge,
        model: str,
        match_steps: StepMatcher,
        output_mode: str = "json_schema",
        temperature: float = 0.0,
    ) -> None:
        super().__init__(client, model, output_mode=output_mode, temperature=temperature)
        self.match_steps = match_steps
        self.recall_format = response_format("context_recall", RECALL_PROPERTIES, output_mode)
        self.precision_format = response_format("context_precision", PRECISION_PROPERTIES, output_mode)

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        steps = response.get("actual_steps") or []
        judgments = [*self._answer_judgments(question, steps), *self._context_judgments(question, steps)]
        if not judgments:
            return {}
        usage = Usage()
        outcomes = await asyncio.gather(
            *(self._judge(question.question_text, judgment, usage) for judgment in judgments)
        )
        annotated = copy.deepcopy(list(steps))
        for judgment, keys in zip(judgments, outcomes, strict=True):
            annotated[judgment.step_index].update(keys)
        result: dict[str, Any] = {"actual_steps": annotated, "retrieval_judge": self.label}
        result.update(question_means(outcomes))
        result.update(usage.as_keys(USAGE_KEYS))
        result.update(usage.refusal_keys())
        return result

    def _answer_judgments(self, question: Question, steps: Sequence[Any]) -> list[Judgment]:
        reference = question.reference_answer
        if isinstance(reference, list):
            reference = next((text for text in reference if text.strip()), None)
        if reference is None:
            return []
        return [
            _judgment(index, "answer", reference, step.get("output"))
            for index, step in enumerate(steps)
            if _judged_step(step)
        ]

    def _context_judgments(self, question: Question, steps: Sequence[Any]) -> list[Judgment]:
        if not question.reference_steps or question.reference_problems or not steps:
            return []
        judgments = []
        for match in self.match_steps(question.reference_steps, steps):
            reference = question.reference_steps[match.group_index][match.reference_index]
            step = steps[match.actual_index]
            if match.score <= 0 or reference.get("name") != RETRIEVAL_STEP or not _judged_step(step):
                continue
            try:
                reference_text = "\n".join(context_texts(reference.get("output")))
            except ValueError as error:
                judgments.append(
                    Judgment(match.actual_index, "context", "", None, f"reference retrieval step: {error}")
                )
                continue
            judgments.append(_judgment(match.actual_index, "context", reference_text, step.get("output")))
        return judgments

    async def _judge(self, question: str, judgment: Judgment, usage: Usage) -> dict[str, Any]:
        prefix = f"retrieval_{judgment.side}_"
        if judgment.contexts is None or not judgment.reference.strip():
            problem = judgment.problem or "the reference is empty"  # a step's problem comes first
            return {f"{prefix}{measure}_error": problem for measure in ("recall", "precision")}
        if not judgment.contexts:
            return {f"{prefix}recall": 0.0, f"{prefix}precision": 0.0, f"{prefix}f1": 0.0}
        head = [data_block("question", question), data_block("reference", judgment.reference)]
        recall, precision = await asyncio.gather(
            self._recall(head, judgment.contexts, usage),
            self._precision(head, judgment.contexts, usage),
            return_exceptions=True,
        )
        keys: dict[str, Any] = {}
        for measure, value in (("recall", recall), ("precision", precision)):
            if isinstance(value, JudgeFailure):
                keys[f"{prefix}{measure}_error"] = str(value)
            elif isinstance(value, BaseException):
                raise value
            else:
                keys[f"{prefix}{measure}"] = value
        if isinstance(recall, float) and isinstance(precision, float):
            keys[f"{prefix}f1"] = f1(recall, precision)
        return keys

    async def _recall(self, head: list[str], contexts: list[str], usage: Usage) -> float:
        blocks = [*head, *(data_block("context", text) for text in contexts)]
        flags = await self.ask(
            RECALL_SYSTEM, "\n\n".join(blocks), parse_attributions, usage, self.recall_format
        )
        return sum(flags) / len(flags)

    async def _precision(self, head: list[str], contexts: list[str], usage: Usage) -> float:
        useful = await gather_all(
            *(
                self.ask(
                    PRECISION_SYSTEM,
                    "\n\n".join([*head, data_block("context", text)]),
                    parse_usefulness,
                    usage,
                    self.precision_format,
                )
                for text in contexts
            )
        )
        return average_precision(useful)


def _judged_step(step: object) -> bool:
    """A retrieval step that produced an output; failed steps are not judged."""
    return (
        isinstance(step, Mapping)
        and step.get("name") == RETRIEVAL_STEP
        and step.get("status") != "error"
        and step.get("output") is not None
    )


def _judgment(step_index: int, side: str, reference: str, output: object) -> Judgment:
    try:
        return Judgment(step_index, side, reference, context_texts(output))
    except ValueError as error:
        return Judgment(step_index, side, reference, None, f"actual retrieval step: {error}")


def question_means(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each metric's mean over the judged steps; its first error when no step has a value."""
    keys: dict[str, Any] = {}
    for side in SIDES:
        for measure in MEASURES:
            name = f"retrieval_{side}_{measure}"
            values = [outcome[name] for outcome in outcomes if name in outcome]
            errors = [outcome[f"{name}_error"] for outcome in outcomes if f"{name}_error" in outcome]
            if values:
                keys[name] = statistics.fmean(values)
            elif errors:
                keys[f"{name}_error"] = errors[0]
    return keys
