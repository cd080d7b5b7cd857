"""Cache-only runs and spending limits of the judge client, through the real SDK on loopback."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm import JudgeClient, LLMError, LLMSettings
from pytest_graphrag_eval.llm.errors import CallRefused
from pytest_graphrag_eval.llm.estimate import CostCeiling
from pytest_graphrag_eval.llm.limits import BUDGET_REACHED, CACHE_MISS, Budget
from pytest_graphrag_eval.report_model import REFUSAL_KEY, refusal_of
from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply


def ask(client: JudgeClient, text: str) -> object:
    return asyncio.run(client.chat([{"role": "user", "content": text}]))


def test_cache_only_answers_hits_and_refuses_misses_without_connecting(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    ask(JudgeClient(llm_settings), "warm the cache")
    fake_openai.reset()
    connections = fake_openai.connections
    offline = dataclasses.replace(llm_settings, cache_only=True, api_key=None)  # offline CI has no key
    client = JudgeClient(offline)
    hit = ask(client, "warm the cache")
    assert hit.cached and hit.text == "ok"  # type: ignore[attr-defined]
    with pytest.raises(CallRefused) as refused:
        ask(client, "never asked before")
    assert refused.value.reason == "cache_miss" and CACHE_MISS in str(refused.value)
    with pytest.raises(CallRefused):
        asyncio.run(client.embed(["never embedded"]))
    assert fake_openai.connections == connections and fake_openai.count() == 0
    assert (client.stats.cache_hits, client.stats.cache_misses_refused, client.stats.calls_made) == (1, 2, 0)


def test_cache_only_without_a_cache_is_a_configuration_error(llm_settings: LLMSettings) -> None:
    with pytest.raises(ConfigurationError, match="cache-only judge needs its cache"):
        dataclasses.replace(llm_settings, cache_only=True, use_cache=False)


def test_call_limit_stops_new_calls_and_cache_hits_stay_free(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    client = JudgeClient(dataclasses.replace(llm_settings, max_calls=2))
    ask(client, "one")
    ask(client, "two")
    with pytest.raises(CallRefused, match="2 of at most 2 judge requests sent") as refused:
        ask(client, "three")
    assert refused.value.reason == "budget" and BUDGET_REACHED in str(refused.value)
    assert ask(client, "one").cached  # type: ignore[attr-defined]
    assert fake_openai.count("chat") == 2 and client.stats.budget_refused == 1


def test_retries_count_against_the_call_limit(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    fake_openai.enqueue(Reply.server_error(), Reply.server_error(), "late")
    client = JudgeClient(dataclasses.replace(llm_settings, max_calls=2))
    with pytest.raises(LLMError, match="judge budget reached"):
        ask(client, "flaky")
    assert fake_openai.count("chat") == 2


def test_cost_limit_lets_calls_in_flight_finish_and_starts_no_new_one(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    """Four short prompts whose estimates fit the budget all start at once; the server bills each far
    above its estimate (a reply longer than the cap does that), so the spend ends above the budget
    by what they really cost, and no further call starts."""
    fake_openai.latency = 0.05
    fake_openai.set_chat_handler(
        lambda body: Reply(content="ok", prompt_tokens=1_000_000, completion_tokens=0)
    )
    client = JudgeClient(dataclasses.replace(llm_settings, max_cost_usd=0.2, concurrency=4))

    async def burst() -> list[object]:
        first = await asyncio.gather(
            *(client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(4)), return_exceptions=True
        )
        later = await asyncio.gather(
            *(client.chat([{"role": "user", "content": f"r{i}"}]) for i in range(3)), return_exceptions=True
        )
        return [*first, *later]

    outcomes = asyncio.run(burst())
    assert all(not isinstance(outcome, BaseException) for outcome in outcomes[:4])
    assert all(isinstance(outcome, CallRefused) for outcome in outcomes[4:])
    assert fake_openai.count("chat") == 4
    assert client.budget.spent_usd == pytest.approx(4 * 0.15)  # in flight finished: above the budget
    assert client.budget.exhausted() == "$0.6000 spent of a $0.2 budget"


def test_cost_limit_reserves_each_calls_estimate_so_concurrency_cannot_overshoot_it(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    """Eight judge calls at once against a $0.0002 budget (issue: $0.0006 was spent): each holds its
    estimated cost while in flight, so the spend ends above the budget by at most one call's estimate."""
    fake_openai.latency = 0.05
    settings = dataclasses.replace(llm_settings, max_cost_usd=0.0002, concurrency=8, model="gpt-4o-mini")
    client = JudgeClient(settings)
    prompts = [f"question {i}: " + " ".join(f"word{j}" for j in range(400)) for i in range(16)]
    ceiling = CostCeiling(None, None)
    estimates = [ceiling.chat([{"role": "user", "content": prompt}], "gpt-4o-mini") for prompt in prompts]

    async def burst() -> list[object]:
        return await asyncio.gather(
            *(client.chat([{"role": "user", "content": prompt}]) for prompt in prompts),
            return_exceptions=True,
        )

    outcomes = asyncio.run(burst())
    answered = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, CallRefused)]
    assert len(answered) + len(refused) == len(prompts) and answered and refused
    spent = client.budget.spent_usd
    assert spent == pytest.approx(sum(result.cost_usd for result in answered))  # type: ignore[attr-defined]
    assert 0.0002 <= spent <= 0.0002 + max(estimates)
    assert client.budget.in_flight == 0 and client.budget.reserved_usd == 0.0
    assert fake_openai.count("chat") == len(answered)


def test_a_call_that_waits_for_a_reservation_starts_when_the_spend_leaves_room(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    """Reservations only hold a call back: once the calls in flight cost less than reserved, it is sent."""
    fake_openai.latency = 0.05
    client = JudgeClient(
        dataclasses.replace(llm_settings, max_cost_usd=0.0002, concurrency=4, model="gpt-4o-mini")
    )
    prompt = " ".join(f"w{j}" for j in range(200))
    estimate = CostCeiling(None, None).chat([{"role": "user", "content": prompt}], "gpt-4o-mini")
    assert estimate > 0.0002  # the second call waits for the first (which costs far less than that)

    async def pair() -> list[object]:
        return await asyncio.gather(
            *(client.chat([{"role": "user", "content": f"{i} {prompt}"}]) for i in range(2)),
            return_exceptions=True,
        )

    outcomes = asyncio.run(pair())
    assert not any(isinstance(outcome, BaseException) for outcome in outcomes)
    assert fake_openai.count("chat") == 2 and client.stats.budget_refused == 0


def test_calls_queued_behind_the_bound_recheck_the_budget(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    fake_openai.latency = 0.02
    client = JudgeClient(dataclasses.replace(llm_settings, max_calls=3, concurrency=2))

    async def burst() -> list[object]:
        return await asyncio.gather(
            *(client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(10)), return_exceptions=True
        )

    outcomes = asyncio.run(burst())
    assert sum(not isinstance(outcome, BaseException) for outcome in outcomes) == 3
    assert fake_openai.count("chat") == 3 and client.stats.budget_refused == 7


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_cost_usd", -1.0, "max_cost_usd must be a number of USD >= 0"),
        ("max_cost_usd", float("nan"), "max_cost_usd must be a number of USD >= 0"),
        ("max_calls", -1, "max_calls must be an integer >= 0"),
        ("max_calls", 2.5, "max_calls must be an integer >= 0"),
    ],
)
def test_bad_limits_are_configuration_errors(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        LLMSettings(**{field: value})


def test_the_refusal_field_wins_over_error_texts() -> None:
    record = {REFUSAL_KEY: "cache_miss", "answer_eval_error": f"x {BUDGET_REACHED}"}
    assert refusal_of(record) == "cache_miss"


def test_a_previous_versions_result_has_its_refusal_read_from_its_error_texts() -> None:
    assert refusal_of({"answer_eval_error": f"judge call failed: chat call {BUDGET_REACHED}: x"}) == "budget"
    assert refusal_of({"answer_relevance_error": f"judge call failed: {CACHE_MISS}"}) == "cache_miss"
    assert refusal_of({"answer_eval_error": "HTTP 500", "answer_f1": 0.5}) is None
    both = {"a_error": f"x {CACHE_MISS}", "b_error": f"y {BUDGET_REACHED}"}
    assert refusal_of(both) == "budget"  # not evaluated wins: the question was cut short


def test_budget_without_limits_never_refuses() -> None:
    budget = Budget()
    for _ in range(1000):
        budget.admit("chat", "m")
    assert budget.exhausted() is None and budget.calls_started == 1000
