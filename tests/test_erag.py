"""erag_eval: the published erag.eval's numbers, its crashes fixed, and concurrent generation."""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.retrieval import ERagError, SingleInput, aerag_eval, erag_eval

WORDS = ["alpha", "beta", "gamma", "delta"]
PARTIAL = {"alpha": 0.5, "beta": 0.25, "gamma": 0.75, "delta": 0}
BINARY_METRICS = {
    "P_1",
    "P_3",
    "map",
    "ndcg",
    "ndcg_cut_5",
    "recip_rank",
    "success_1",
    "recall_5",
    "map_cut_2",
}
CONTINUOUS_METRICS = {"P_1", "P_2", "success_1", "success_2", "P", "success"}


def first_word(question, documents):
    return documents[0].split()[0]


def exact(prediction, references):
    return float(prediction in references)


def partial(prediction, references):
    return PARTIAL[prediction]


def random_inputs(rng: random.Random, min_docs: int = 0):
    results = {
        f"question {i}": [f"{rng.choice(WORDS)} text {j}" for j in range(rng.randint(min_docs, 12))]
        for i in range(rng.randint(1, 6))
    }
    expected = {question: rng.sample(WORDS, rng.randint(1, 2)) for question in results}
    if min_docs:
        results["question 0"][0] = "alpha text"  # one label of `partial` is neither 0 nor 1
    return results, expected


@pytest.mark.parametrize(("metric", "names"), [(exact, BINARY_METRICS), (partial, CONTINUOUS_METRICS)])
def test_same_numbers_as_published_erag(metric, names) -> None:
    # erag pins pytrec_eval==0.5; install it with `pip install --no-deps erag` (pytrec-eval-terrier
    # provides the pytrec_eval module it imports).
    erag = pytest.importorskip("erag", reason="the published package: pip install --no-deps erag")
    from erag.utils import batchify_downstream_metric, batchify_text_generator

    rng = random.Random(5)
    for _ in range(150):
        results, expected = random_inputs(rng, min_docs=2)  # the published package crashes on shorter lists
        args = (
            results,
            expected,
            batchify_text_generator(first_word),
            batchify_downstream_metric(metric),
            names,
        )
        published = erag.eval(*args)
        assert erag_eval(*args) == published
        assert erag_eval(results, expected, SingleInput(first_word), SingleInput(metric), names) == published


def test_worked_example() -> None:
    results = {"q": ["seeker text", "chaser text", "seeker again", "keeper"]}
    outcome = erag_eval(
        results, {"q": ["seeker"]}, SingleInput(first_word), "exact_match", {"P_2", "map", "success"}
    )
    assert outcome["per_input"] == {"q": {"P_2": 0.5, "map": (1 + 2 / 3) / 2, "success": 1.0}}
    assert outcome["aggregated"] == outcome["per_input"]["q"]


def test_plain_cutoff_measures_cover_the_whole_list_for_binary_and_continuous_labels() -> None:
    results = {"a": ["alpha x", "beta x", "gamma x"], "b": ["delta x"]}
    expected = {"a": ["gamma"], "b": ["alpha"]}
    binary = erag_eval(
        results, expected, SingleInput(first_word), SingleInput(exact), {"P", "success", "recall"}
    )
    assert binary["per_input"] == {
        "a": {"P": 1 / 3, "success": 1.0, "recall": 1.0},
        "b": {"P": 0.0, "success": 0.0, "recall": 0.0},
    }
    assert binary["aggregated"] == {"P": 1 / 6, "success": 0.5, "recall": 0.5}
    continuous = erag_eval(results, expected, SingleInput(first_word), SingleInput(partial), {"P", "success"})
    assert continuous["per_input"] == {"a": {"P": 1.5 / 3, "success": 0.75}, "b": {"P": 0.0, "success": 0}}


def test_continuous_precision_beyond_the_list_counts_missing_ranks_as_zero() -> None:
    results = {"a": ["alpha x", "gamma x"]}
    outcome = erag_eval(
        results, {"a": ["x"]}, SingleInput(first_word), SingleInput(partial), {"P_4", "success_4"}
    )
    assert outcome["per_input"] == {"a": {"P_4": 1.25 / 4, "success_4": 0.75}}


def test_a_question_that_retrieved_nothing_scores_zero() -> None:
    results = {"empty": [], "full": ["alpha x"]}
    expected = {"empty": ["alpha"], "full": ["alpha"]}
    for metric in (exact, partial):
        outcome = erag_eval(
            results, expected, SingleInput(first_word), SingleInput(metric), {"P_1", "success"}
        )
        assert outcome["per_input"]["empty"] == {"P_1": 0.0, "success": 0.0}
    assert erag_eval({}, {}, SingleInput(first_word), "exact_match", {"P_1"}) == {
        "per_input": {},
        "aggregated": {},
    }


def test_continuous_labels_with_rank_measures_are_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"only P and success, so map, ndcg_cut_3 cannot"):
        erag_eval(
            {"a": ["alpha x"]},
            {"a": ["x"]},
            SingleInput(first_word),
            SingleInput(partial),
            ["P_1", "map", "ndcg_cut_3"],
        )


@pytest.mark.parametrize("label", [1.5, -0.1, math.nan, "1", None])
def test_labels_outside_the_unit_interval_are_errors(label) -> None:
    with pytest.raises(ERagError, match=r"number in \[0, 1\].*document #2 of question 'a'"):
        erag_eval(
            {"a": ["x", "y"]},
            {"a": ["x"]},
            SingleInput(first_word),
            SingleInput(lambda p, r: 1 if p == "x" else label),
            {"P_1"},
        )


def test_broken_generators_and_inputs_are_clear_errors() -> None:
    docs, expected = {"a": ["x"], "b": ["y"]}, {"a": ["x"], "b": ["y"]}
    with pytest.raises(ERagError, match="missing 'b'"):
        erag_eval(docs, expected, lambda batch: {"a": "x"}, "exact_match", {"P_1"})
    with pytest.raises(ERagError, match="must return text, got int"):
        erag_eval(docs, expected, SingleInput(lambda q, d: 3), "exact_match", {"P_1"})
    with pytest.raises(ERagError, match=r"generator failed for document #1 of question 'b': KeyError"):
        erag_eval(docs, expected, SingleInput(lambda q, d: {"a": "x"}[q]), "exact_match", {"P_1"})
    with pytest.raises(ERagError, match="no expected outputs for 'b'"):
        erag_eval(docs, {"a": ["x"]}, SingleInput(first_word), "exact_match", {"P_1"})
    with pytest.raises(ERagError, match="document #1 must be text"):
        erag_eval({"a": [None]}, {"a": ["x"]}, SingleInput(first_word), "exact_match", {"P_1"})
    with pytest.raises(ConfigurationError, match="unknown eRAG downstream metric 'bleu'"):
        erag_eval(docs, expected, SingleInput(first_word), "bleu", {"P_1"})
    with pytest.raises(ConfigurationError, match="unsupported retrieval metric"):
        erag_eval(docs, expected, SingleInput(first_word), "exact_match", {"P@1"})


def test_expected_output_may_be_a_single_text() -> None:
    outcome = erag_eval({"a": ["x 1"]}, {"a": "X"}, SingleInput(first_word), "exact_match", {"P_1"})
    assert outcome["per_input"] == {"a": {"P_1": 1.0}}


class Tracker:
    """An async single-input generator that records how many calls overlap."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay
        self.active = 0
        self.peak = 0
        self.calls = 0

    async def __call__(self, question, documents):
        self.active += 1
        self.calls += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(self.delay)
        self.active -= 1
        return documents[0].split()[0]


def test_async_callables_run_concurrently_up_to_the_bound() -> None:
    generator = Tracker()
    results = {f"q{i}": [f"w{j} doc" for j in range(5)] for i in range(8)}
    expected = {question: ["w0"] for question in results}
    outcome = erag_eval(results, expected, SingleInput(generator), "exact_match", {"P_1"}, concurrency=7)
    assert generator.calls == 40 and generator.peak == 7
    assert outcome["aggregated"] == {"P_1": 1.0}


def test_async_batched_generators_get_one_batch_per_rank() -> None:
    batches = []

    async def batched(inputs):
        batches.append(sorted(inputs))
        await asyncio.sleep(0)
        return {question: docs[0] for question, docs in inputs.items()}

    erag_eval({"a": ["1", "2"], "b": ["3"]}, {"a": ["1"], "b": ["3"]}, batched, "exact_match", {"P_1"})
    assert sorted(batches) == [["a"], ["a", "b"]]


def test_erag_eval_refuses_to_nest_event_loops() -> None:
    async def nested():
        return erag_eval({"a": ["x"]}, {"a": ["x"]}, SingleInput(first_word), "exact_match", {"P_1"})

    with pytest.raises(ERagError, match="await aerag_eval"):
        asyncio.run(nested())
    result = asyncio.run(
        aerag_eval({"a": ["x"]}, {"a": ["x"]}, SingleInput(first_word), "exact_match", {"P_1"})
    )
    assert result["per_input"] == {"a": {"P_1": 1.0}}
