"""erag_eval(): the eRAG score (Salemi & Zamani, SIGIR 2024) with the published `erag.eval` API.

Same arguments, return shape and numbers; unlike it, every (question, document) pair runs at once,
bounded by `concurrency` for callables and by the judge client for model-backed parts. Binary labels get
every measure with trec_eval's values; continuous ones only `P` and `success`. Where the published `erag`
crashes (a measure without a cut-off, k beyond the list, an empty list) we take the whole list, count
missing ranks as 0 and score 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import math
import numbers
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.llm.event_loop import run_coroutine
from pytest_graphrag_eval.metrics.ranking import MeasurePlan, parse_measures, score_ranking
from pytest_graphrag_eval.retrieval.erag_config import (
    CONTINUOUS_MEASURES,
    DEFAULT_CONCURRENCY,
    SingleInput,
    named_metric,
)

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.judge import Usage

T = TypeVar("T")
Item = tuple[str, int]  # (question, 0-based position of the document in its list)
Where = tuple[str | None, int]  # an item, or (None, position) for a batch of one position


class ERagError(GraphragEvalError):
    """eRAG could not run: bad inputs, or a generator or downstream metric broke its contract."""


def erag_eval(
    retrieval_results: Mapping[str, Sequence[str]],
    expected_outputs: Mapping[str, Sequence[str] | str],
    text_generator: object,
    downstream_metric: object,
    retrieval_metrics: str | Iterable[str],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> dict[str, Any]:
    """eRAG scores `{"per_input": ..., "aggregated": ...}`; a sync wrapper over `aerag_eval`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        evaluation = aerag_eval(
            retrieval_results,
            expected_outputs,
            text_generator,
            downstream_metric,
            retrieval_metrics,
            concurrency=concurrency,
        )
        return run_coroutine(_run_and_close(evaluation, (text_generator, downstream_metric)))
    raise ERagError("erag_eval() cannot run inside an event loop; use `await aerag_eval(...)` there")


async def _run_and_close(evaluation: Awaitable[dict[str, Any]], parts: Sequence[Any]) -> dict[str, Any]:
    """Run eRAG in a loop of our own, then release the judge client connections bound to that loop."""
    try:
        return await evaluation
    finally:
        for part in parts:
            if getattr(part, "self_limited", False):
                await part.client.aclose()


async def aerag_eval(
    retrieval_results: Mapping[str, Sequence[str]],
    expected_outputs: Mapping[str, Sequence[str] | str],
    text_generator: object,
    downstream_metric: object,
    retrieval_metrics: str | Iterable[str],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> dict[str, Any]:
    """Async form of `erag_eval`."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigurationError(f"eRAG concurrency must be an integer >= 1, got {concurrency!r}")
    documents = _documents(retrieval_results)
    expected = _expected(expected_outputs, documents)
    metrics = [retrieval_metrics] if isinstance(retrieval_metrics, str) else list(retrieval_metrics)
    parse_measures(metrics)
    if isinstance(downstream_metric, str):
        downstream_metric = named_metric(downstream_metric)
    semaphore = asyncio.Semaphore(concurrency)
    return await erag_within(documents, expected, text_generator, downstream_metric, metrics, semaphore)


async def erag_within(
    documents: Mapping[str, list[str]],
    expected: Mapping[str, list[str]],
    text_generator: object,
    downstream_metric: object,
    metrics: Sequence[str],
    semaphore: asyncio.Semaphore,
    usage: Usage | None = None,
) -> dict[str, Any]:
    """eRAG on checked inputs (each question's documents and reference texts, metric names that parse),
    callables bounded by a shared `semaphore`; model calls add their usage to `usage`."""
    items = [(question, position) for question, docs in documents.items() for position in range(len(docs))]
    outputs = await _generate(text_generator, items, documents, semaphore, usage)
    scores = await _score(downstream_metric, items, outputs, expected, semaphore, usage)
    labels = {
        question: [check_label(scores[(question, i)], question, i) for i in range(len(docs))]
        for question, docs in documents.items()
    }
    return score_labels(labels, metrics)


def _documents(retrieval_results: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    if not isinstance(retrieval_results, Mapping):
        raise ERagError("retrieval_results must map each question to its list of retrieved document texts")
    documents: dict[str, list[str]] = {}
    for question, docs in retrieval_results.items():
        if isinstance(docs, str) or not isinstance(docs, Sequence):
            raise ERagError(f"retrieval_results[{question!r}] must be a list of document texts")
        for position, doc in enumerate(docs):
            if not isinstance(doc, str):
                raise ERagError(
                    f"retrieval_results[{question!r}]: document #{position + 1} must be text, "
                    f"got {type(doc).__name__}"
                )
        documents[question] = list(docs)
    return documents


def _expected(
    expected_outputs: Mapping[str, Sequence[str] | str], documents: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    if not isinstance(expected_outputs, Mapping):
        raise ERagError("expected_outputs must map each question to its list of expected outputs")
    missing = [question for question in documents if question not in expected_outputs]
    extra = [question for question in expected_outputs if question not in documents]
    if missing or extra:
        parts = [f"no expected outputs for {_some(missing)}"] if missing else []
        parts += (
            [f"expected outputs for questions without retrieval results: {_some(extra)}"] if extra else []
        )
        raise ERagError("the questions of retrieval_results and expected_outputs differ: " + "; ".join(parts))
    expected: dict[str, list[str]] = {}
    for question in documents:
        value = expected_outputs[question]
        refs = [value] if isinstance(value, str) else value
        if not isinstance(refs, Sequence) or not all(isinstance(ref, str) for ref in refs):
            raise ERagError(f"expected_outputs[{question!r}] must be a text or a list of texts")
        expected[question] = list(refs)
    return expected


def _some(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _one_item_form(
    part: object, semaphore: asyncio.Semaphore, usage: Usage | None
) -> tuple[Callable[..., object], asyncio.Semaphore | None] | None:
    """A one-item part's function and the bound on its calls (None for the batched form); model-backed
    parts are bounded by the judge client."""
    if isinstance(part, SingleInput):
        return part.function, semaphore
    if getattr(part, "self_limited", False) and callable(part):
        return (part if usage is None else functools.partial(part, usage=usage)), None
    return None


async def _generate(
    generator: object,
    items: list[Item],
    documents: Mapping[str, list[str]],
    semaphore: asyncio.Semaphore,
    usage: Usage | None,
) -> dict[Item, str]:
    if not callable(generator) and not isinstance(generator, SingleInput):
        raise ConfigurationError("text_generator must be a callable, SingleInput(callable) or ModelGenerator")
    one_item = _one_item_form(generator, semaphore, usage)
    if one_item is not None:
        function, limit = one_item

        async def one(item: Item) -> str:
            question, position = item
            document = documents[question][position]
            return _text(await _call(limit, "text generator", item, function, question, [document]), item)

        return dict(zip(items, await _gather(one(item) for item in items), strict=True))

    async def batch(position: int) -> dict[Item, str]:
        inputs = {question: [docs[position]] for question, docs in documents.items() if position < len(docs)}
        assert callable(generator)  # checked above
        called = await _call(semaphore, "text generator", (None, position), generator, inputs)
        outputs = _check_batch(called, inputs, "text_generator", "outputs")
        return {(question, position): _text(outputs[question], (question, position)) for question in inputs}

    longest = max((len(docs) for docs in documents.values()), default=0)
    return _merge(await _gather(batch(position) for position in range(longest)))


async def _score(
    metric: object,
    items: list[Item],
    outputs: Mapping[Item, str],
    expected: Mapping[str, list[str]],
    semaphore: asyncio.Semaphore,
    usage: Usage | None,
) -> dict[Item, object]:
    if not callable(metric) and not isinstance(metric, SingleInput):
        raise ConfigurationError(
            "downstream_metric must be a callable, SingleInput(callable), LLMJudgeMetric or a metric name"
        )
    one_item = _one_item_form(metric, semaphore, usage)
    if one_item is not None:
        function, limit = one_item
        # Model-backed judges also see the question; one-item callables get (prediction, references).
        with_question = not isinstance(metric, SingleInput)

        async def one(item: Item) -> object:
            question = item[0]
            args = (outputs[item], expected[question], *((question,) if with_question else ()))
            return await _call(limit, "downstream metric", item, function, *args)

        return dict(zip(items, await _gather(one(item) for item in items), strict=True))

    by_position: dict[int, dict[str, str]] = {}
    for (question, position), text in outputs.items():
        by_position.setdefault(position, {})[question] = text

    async def batch(position: int) -> dict[Item, object]:
        assert callable(metric)  # checked above
        generated = by_position[position]
        wanted = {question: expected[question] for question in generated}
        called = await _call(semaphore, "downstream metric", (None, position), metric, generated, wanted)
        scores = _check_batch(called, generated, "downstream_metric", "scores")
        return {(question, position): scores[question] for question in generated}

    return _merge(await _gather(batch(position) for position in sorted(by_position)))


async def _call(
    limit: asyncio.Semaphore | None, role: str, item: Where, function: Callable[..., object], *args: object
) -> object:
    """Call a sync or async user function; its failure becomes an ERagError saying which item failed."""
    question, position = item
    where = (
        f"document #{position + 1} of question {question!r}"
        if question is not None
        else f"the documents at rank {position + 1}"
    )
    try:
        async with limit or contextlib.nullcontext():
            value = function(*args)
            return await value if inspect.isawaitable(value) else value
    except GraphragEvalError as error:
        if isinstance(error, (ConfigurationError, ERagError)):
            raise
        raise ERagError(f"the {role} failed for {where}: {error}") from error
    except Exception as error:
        raise ERagError(f"the {role} failed for {where}: {type(error).__name__}: {error}") from error


async def _gather(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Run all at once; on the first failure cancel the rest and raise that failure."""
    failure: BaseException | None = None
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(coroutine) for coroutine in coroutines]
    except BaseExceptionGroup as failures:
        failure = failures.exceptions[0]
    if failure is not None:
        raise failure
    return [task.result() for task in tasks]


def _check_batch(result: object, inputs: Mapping[str, object], role: str, what: str) -> Mapping[str, object]:
    """`result` when it is a dict with exactly the questions of `inputs`."""
    if not isinstance(result, Mapping):
        raise ERagError(f"{role} must return a dict of {what} keyed by question, got {type(result).__name__}")
    missing = [question for question in inputs if question not in result]
    extra = [question for question in result if question not in inputs]
    if missing or extra:
        problems = [f"missing {_some(missing)}"] if missing else []
        problems += [f"unexpected {_some(extra)}"] if extra else []
        raise ERagError(
            f"{role} must return {what} for exactly the questions it was given: {'; '.join(problems)}"
        )
    return result


def _text(output: object, item: Item) -> str:
    if not isinstance(output, str):
        question, position = item
        raise ERagError(
            f"the text generator must return text, got {type(output).__name__} "
            f"for document #{position + 1} of question {question!r}"
        )
    return output


def _merge(parts: Iterable[Mapping[Item, T]]) -> dict[Item, T]:
    return {item: value for part in parts for item, value in part.items()}


def check_label(value: Any, question: str, position: int) -> float | int:
    """A downstream score as a label: a number in [0, 1]; 0/1 become integers as in eRAG."""
    if isinstance(value, bool):
        return int(value)
    number = float(value) if isinstance(value, numbers.Real) else math.nan
    if math.isnan(number) or not 0 <= number <= 1:
        raise ERagError(
            f"the downstream metric must return a number in [0, 1], got {value!r} "
            f"for document #{position + 1} of question {question!r}"
        )
    return int(number) if number in (0, 1) else number


def score_labels(labels: Mapping[str, Sequence[float]], names: Sequence[str]) -> dict[str, Any]:
    """eRAG's result: `{"per_input": {question: {metric: value}}, "aggregated": {metric: mean}}` for the
    metric `names` (checked by the caller before any label was made)."""
    binary = all(label in (0, 1) for values in labels.values() for label in values)
    per_input: dict[str, dict[str, float]] = {}
    plans: dict[int, MeasurePlan] = {}
    for question, values in labels.items():
        plan = plans.get(len(values))
        if plan is None:
            plan = plans[len(values)] = parse_measures(names, full_length=len(values))
            if not binary:
                _check_continuous(plan, names)
        if binary:
            relevance = [int(label) for label in values]
            per_input[question] = score_ranking(plan, relevance, relevance)
        else:
            per_input[question] = _continuous(plan, values)
    return {"per_input": per_input, "aggregated": _means(per_input)}


def _check_continuous(plan: MeasurePlan, names: Sequence[str]) -> None:
    if plan.recall or plan.ndcg_cut or plan.map_cut or plan.map or plan.recip_rank or plan.ndcg:
        unsupported = sorted(name for name in names if not name.startswith(CONTINUOUS_MEASURES))
        raise ConfigurationError(
            "the downstream metric returned labels between 0 and 1 (not only 0 and 1); with such "
            f"labels eRAG defines only P and success, so {', '.join(unsupported)} cannot be computed "
            "(use a binary downstream metric such as exact_match, or drop those metrics)"
        )


def _continuous(plan: MeasurePlan, labels: Sequence[float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for cutoff, key in plan.precision:
        total: float = 0
        for label in labels[:cutoff]:
            total += label
        out[key] = total / cutoff
    for cutoff, key in plan.success:
        out[key] = max(labels[:cutoff], default=0)
    return out


def _means(per_input: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    if not per_input:
        return {}
    keys = next(iter(per_input.values())).keys()
    # The builtin sum, as the published package uses, so means agree with it to the last bit.
    return {key: sum(result[key] for result in per_input.values()) / len(per_input) for key in keys}
