"""The on-disk cache: zero calls on re-runs, tolerance of corrupt entries, safe concurrent writers."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import multiprocessing
from pathlib import Path

import pytest

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm import JudgeClient, clear_cache
from pytest_graphrag_eval.llm.cache import NAMESPACE, ResponseCache, cache_key
from pytest_graphrag_eval.testing import Reply

MESSAGES = [{"role": "user", "content": "How many substations are in Bergen?"}]


def entries(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / NAMESPACE).glob("*/*.json"))


async def judge_all(client: JudgeClient, n: int = 5):
    chats = [client.chat([{"role": "user", "content": f"question {i}"}]) for i in range(n)]
    return await asyncio.gather(*chats, client.embed(["a", "b"]))


def test_second_run_makes_no_calls_and_keeps_costs(fake_openai, llm_settings) -> None:
    fake_openai.set_chat_handler(
        lambda body: Reply(content="reply " + body["messages"][0]["content"], prompt_tokens=100)
    )
    first_client = JudgeClient(llm_settings)
    first = asyncio.run(judge_all(first_client))
    assert fake_openai.count() == 6

    second_client = JudgeClient(llm_settings)  # a new run: fresh process state, same cache directory
    second = asyncio.run(judge_all(second_client))
    assert fake_openai.count() == 6
    assert second_client.stats.calls_made == 0 and second_client.stats.cache_hits == 6
    assert second_client.stats.cost_usd == 0.0 and second_client.stats.input_tokens == 0
    for before, after in zip(first, second, strict=True):
        assert after.cached and not before.cached
        assert dataclasses.replace(after, cached=False) == before  # same text/vectors, tokens and cost


def test_cache_key_covers_every_parameter(fake_openai, llm_settings) -> None:
    client = JudgeClient(llm_settings)

    async def variants():
        await client.chat(MESSAGES)
        await client.chat(MESSAGES)  # identical: hit
        await client.chat(MESSAGES, model="gpt-4o")
        await client.chat(MESSAGES, temperature=0.7)
        await client.chat(MESSAGES, response_format={"type": "json_object"})
        await client.chat(MESSAGES, cache_key_extra="sample-2")
        await client.chat([{"role": "system", "content": "be brief"}, *MESSAGES])
        await client.embed(["How many substations are in Bergen?"])
        await client.embed(["How many substations are in Bergen?"], model="text-embedding-3-large")

    asyncio.run(variants())
    assert fake_openai.count() == 8
    assert client.stats.cache_hits == 1
    assert len(entries(llm_settings.cache_dir)) == 8


def test_use_cache_false_neither_reads_nor_writes(fake_openai, llm_settings) -> None:
    asyncio.run(JudgeClient(llm_settings).chat(MESSAGES))
    stored = entries(llm_settings.cache_dir)
    uncached = JudgeClient(dataclasses.replace(llm_settings, use_cache=False))
    asyncio.run(uncached.chat(MESSAGES))
    asyncio.run(uncached.chat([{"role": "user", "content": "new"}]))
    assert fake_openai.count() == 3 and uncached.stats.cache_hits == 0
    assert entries(llm_settings.cache_dir) == stored


def test_cache_dir_none_disables_the_cache(fake_openai, llm_settings) -> None:
    client = JudgeClient(dataclasses.replace(llm_settings, cache_dir=None))
    asyncio.run(client.chat(MESSAGES))
    asyncio.run(client.chat(MESSAGES))
    assert fake_openai.count() == 2
    assert not llm_settings.cache_dir.exists()


@pytest.mark.parametrize(
    "garbage",
    [
        '{"kind": "chat", "model": "gpt-4o-mini", "res',
        "",
        "[1, 2]",
        '{"kind": "chat", "result": {"text": 1}}',
    ],
    ids=["truncated", "empty", "not-an-object", "wrong-fields"],
)
def test_corrupt_entry_is_ignored_and_overwritten(fake_openai, llm_settings, garbage) -> None:
    fake_openai.enqueue("first", "second")
    assert asyncio.run(JudgeClient(llm_settings).chat(MESSAGES)).text == "first"
    (entry,) = entries(llm_settings.cache_dir)
    entry.write_text(garbage, encoding="utf-8")

    client = JudgeClient(llm_settings)
    result = asyncio.run(client.chat(MESSAGES))
    assert (result.text, result.cached, fake_openai.count()) == ("second", False, 2)
    assert json.loads(entry.read_text(encoding="utf-8"))["result"]["text"] == "second"
    assert asyncio.run(client.chat(MESSAGES)).cached


def test_entry_with_unexpected_result_fields_is_a_miss(fake_openai, llm_settings) -> None:
    asyncio.run(JudgeClient(llm_settings).chat(MESSAGES))
    (entry,) = entries(llm_settings.cache_dir)
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["result"]["surprise"] = True
    entry.write_text(json.dumps(data), encoding="utf-8")
    client = JudgeClient(llm_settings)
    assert not asyncio.run(client.chat(MESSAGES)).cached
    assert fake_openai.count() == 2


def test_api_key_never_reaches_cache_files(fake_openai, llm_settings) -> None:
    asyncio.run(judge_all(JudgeClient(llm_settings)))
    files = entries(llm_settings.cache_dir)
    assert files
    for path in files:
        assert llm_settings.api_key not in path.read_text(encoding="utf-8")
        assert llm_settings.api_key not in path.name


def test_clear_cache_removes_only_llm_entries(fake_openai, llm_settings) -> None:
    asyncio.run(judge_all(JudgeClient(llm_settings), n=3))
    other = llm_settings.cache_dir / "other-tool.txt"
    other.write_text("keep me", encoding="utf-8")
    assert clear_cache(llm_settings.cache_dir) == 4
    assert entries(llm_settings.cache_dir) == [] and other.exists()
    assert clear_cache(llm_settings.cache_dir) == 0
    assert clear_cache(llm_settings.cache_dir / "missing") == 0


def test_unusable_cache_folder_is_an_error_before_any_call(fake_openai, llm_settings, tmp_path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="file-not-dir is a file, not a folder"):
        JudgeClient(dataclasses.replace(llm_settings, cache_dir=blocker / "cache"))
    assert fake_openai.count() == 0


def test_cache_failing_during_the_run_loses_only_the_cache(fake_openai, llm_settings, tmp_path) -> None:
    cache_dir = tmp_path / "cache"
    client = JudgeClient(dataclasses.replace(llm_settings, cache_dir=cache_dir))
    cache_dir.write_text("the folder became a file after start-up", encoding="utf-8")
    assert asyncio.run(client.chat(MESSAGES)).text == "ok"


def test_cache_key_is_order_insensitive_for_mappings_only() -> None:
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1, "b": [1, 2]}) != cache_key({"a": 1, "b": [2, 1]})


BLOB_REPEAT = 20000


def _hammer(root: str, writer: int, rounds: int, keys: list[str], barrier, results) -> None:
    """Write and read the same keys as the other processes; report how many reads were broken.

    A read is broken when an entry written before is missing or mixes two writers;
    a plain open-and-write implementation fails this for dozens of reads per process.
    """
    cache = ResponseCache(Path(root))
    broken = 0
    barrier.wait()
    for round_ in range(rounds):
        for key in keys:
            cache.put(key, {"writer": writer, "blob": f"{writer}:" * BLOB_REPEAT})
            for other in keys:
                entry = cache.get(other)
                if entry is None:
                    broken += round_ > 0
                elif entry["blob"] != f"{entry['writer']}:" * BLOB_REPEAT:
                    broken += 1
    results.put(broken)


def test_concurrent_writer_processes_never_expose_partial_entries(tmp_path) -> None:
    keys = [cache_key({"k": i}) for i in range(3)]
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    workers = [
        context.Process(target=_hammer, args=(str(tmp_path), w, 30, keys, barrier, results)) for w in range(4)
    ]
    for worker in workers:
        worker.start()
    broken = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=10)
    assert broken == [0, 0, 0, 0]
    cache = ResponseCache(tmp_path)
    assert all(cache.get(key) is not None for key in keys)
    assert not list(tmp_path.rglob("*.tmp"))
