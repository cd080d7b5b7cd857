"""eRAG wall time with a 100 ms generator, against the ideal: calls x latency / concurrency.

    python benchmarks/bench_erag.py            # 100 questions x 10 documents
    python benchmarks/bench_erag.py --quick    # 20 questions x 5 documents, for CI

Variants: an async Python generator that sleeps, and a ModelGenerator going
through the judge client to the loopback OpenAI-compatible server (latency
100 ms per request), run in a separate process as a real endpoint would be;
in this process it would compete with the client for the GIL. At high
concurrency the model variant is bound by the OpenAI SDK's own CPU cost per
request (a few ms here), not by eRAG. Prints the median of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

from timing import announce_quick

from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.retrieval import ModelGenerator, SingleInput, aerag_eval
from pytest_graphrag_eval.testing import FakeOpenAIServer

LATENCY = 0.1
METRICS = {"P_5", "success", "map"}


def make_inputs(questions: int, documents: int) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    results = {
        f"question {i}": [f"word{j} document {j} of {i}" for j in range(documents)] for i in range(questions)
    }
    expected = {question: ["word0", "word3"] for question in results}
    return results, expected


async def sleeping_generator(question: str, documents: list[str]) -> str:
    await asyncio.sleep(LATENCY)
    return documents[0].split()[0]


def serve(connection: Connection) -> None:
    """Child process: run the loopback server, send its URL, report its counters when told to stop."""
    with FakeOpenAIServer(latency=LATENCY) as server:
        server.set_chat_handler(lambda request: "word0")
        connection.send(server.base_url)
        connection.recv()
        connection.send((server.count("chat"), server.max_in_flight))


def timed(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(name: str, seconds: float, calls: int, concurrency: int) -> None:
    ideal = calls * LATENCY / concurrency
    print(f"{name:<36} {seconds:7.2f} s   ideal {ideal:5.2f} s   ratio {seconds / ideal:5.2f}")


def bench_model_generator(
    results: dict[str, list[str]], expected: dict[str, list[str]], concurrencies: list[int], repeats: int
) -> None:
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(target=serve, args=(child,), daemon=True)
    process.start()
    try:
        base_url = parent.recv()
        calls = sum(len(documents) for documents in results.values())
        for concurrency in concurrencies:
            settings = LLMSettings(
                base_url=base_url,
                api_key="sk-bench",
                concurrency=concurrency,
                cache_dir=None,
                use_cache=False,
            )
            client = JudgeClient(settings)

            async def run(client: JudgeClient = client) -> object:
                try:
                    return await aerag_eval(results, expected, ModelGenerator(client), "exact_match", METRICS)
                finally:
                    await client.aclose()

            seconds = timed(lambda: asyncio.run(run()), repeats)
            report(f"ModelGenerator via loopback, {concurrency}", seconds, calls, concurrency)
        parent.send("stop")
        requests, peak = parent.recv()
        print(f"  (the server saw {requests} requests in all, at most {peak} at once)")
    finally:
        process.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 questions x 5 documents, 1 run")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument(
        "--model-concurrency",
        type=int,
        nargs="+",
        default=[10, 50],
        help="client concurrencies for the ModelGenerator variant",
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    announce_quick(args.quick)
    questions, documents, repeats = (20, 5, 1) if args.quick else (100, 10, args.repeats)
    results, expected = make_inputs(questions, documents)
    calls = questions * documents
    print(
        f"{questions} questions x {documents} documents = {calls} generator calls "
        f"of {LATENCY * 1000:.0f} ms, median of {repeats} runs (name, concurrency: time)"
    )

    def python_run() -> object:
        return asyncio.run(
            aerag_eval(
                results,
                expected,
                SingleInput(sleeping_generator),
                "exact_match",
                METRICS,
                concurrency=args.concurrency,
            )
        )

    report(f"async Python generator, {args.concurrency}", timed(python_run, repeats), calls, args.concurrency)
    bench_model_generator(results, expected, args.model_concurrency, repeats)


if __name__ == "__main__":
    main()
