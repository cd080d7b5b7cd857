"""Answer correctness + relevance for N questions against a 100 ms loopback endpoint.

    python benchmarks/bench_answers.py            # 200 questions, median of 3 runs
    python benchmarks/bench_answers.py --quick    # 20 questions, one run, for CI

Each question costs 5 requests (1 correctness, 3 relevance generations, 1
embeddings). The budget: a cold run takes under 1/8 of the sequential time
(requests x 100 ms), and a second run over the same cache makes 0 requests.
The server runs in its own process, as a real endpoint would; in this process
it would compete with the client for the GIL. Exits 1 when a budget is missed
(with --quick only the cache check counts: CI never fails on wall-clock time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from timing import announce_quick

from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.evaluation import arun_evaluation
from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.scorer_factory import build_scorers
from pytest_graphrag_eval.testing import FakeOpenAIServer

LATENCY = 0.1
BUDGET = 1 / 8


def judge_reply(body: dict[str, Any]) -> str:
    """Server-side handler: a verdict for correctness requests, a question for relevance ones."""
    if "reference_claims_count" in body["messages"][0]["content"]:
        reply = {
            "reference_claims_count": 2,
            "actual_claims_count": 2,
            "matching_claims_count": 1,
            "reason": "r",
        }
    else:
        reply = {"question": "Which transformers are in the substation?", "noncommittal": 0}
    return json.dumps(reply)


def serve(connection: Connection) -> None:
    """Child process: run the loopback server, send its URL, answer `count` requests until `stop`."""
    with FakeOpenAIServer(latency=LATENCY) as server:
        server.set_chat_handler(judge_reply)
        connection.send(server.base_url)
        while (message := connection.recv()) != "stop":
            if message == "count":
                connection.send((server.count(), server.max_in_flight))


def make_inputs(questions: int) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    corpus = [
        {
            "template_id": "transformers",
            "questions": [
                {
                    "id": f"q{i}",
                    "question_text": f"Which transformers are in substation S{i}?",
                    "reference_answer": f"S{i} T1, S{i} T2",
                }
                for i in range(questions)
            ],
        }
    ]
    responses = {
        f"q{i}": {"actual_answer": f"The transformers of S{i} are S{i} T1 and S{i} T3."}
        for i in range(questions)
    }
    return corpus, responses


async def evaluate(base_url: str, cache_dir: Path, concurrency: int, questions: int) -> float:
    """One run; returns its wall time. Any metric error aborts: the figures would be meaningless."""
    corpus, responses = make_inputs(questions)
    settings = LLMSettings(
        base_url=base_url, api_key="sk-bench", concurrency=concurrency, cache_dir=cache_dir
    )
    answers = AnswerSettings(judge="llm", relevance=True)
    async with JudgeClient(settings) as client:
        started = time.perf_counter()
        results = await arun_evaluation(corpus, responses, scorers=build_scorers(answers, client))
        elapsed = time.perf_counter() - started
    errors = [key for result in results for key in result if key.endswith("_error")]
    if errors or any("answer_relevance" not in result for result in results):
        raise SystemExit(f"benchmark run had metric errors: {errors[:3]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="20 questions, one run")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32, help="judge client concurrency (default 32)")
    args = parser.parse_args()
    announce_quick(args.quick)
    questions, runs = (20, 1) if args.quick else (args.questions, args.runs)

    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(target=serve, args=(child,), daemon=True)
    process.start()
    try:
        base_url = parent.recv()

        def requests_so_far() -> tuple[int, int]:
            parent.send("count")
            counts: tuple[int, int] = parent.recv()
            return counts

        cold_times, warm_times, cold_calls, warm_calls = [], [], [], []
        for _ in range(runs):
            with tempfile.TemporaryDirectory(prefix="bench-answers-") as cache:
                before, _ = requests_so_far()
                cold_times.append(asyncio.run(evaluate(base_url, Path(cache), args.concurrency, questions)))
                middle, peak = requests_so_far()
                warm_times.append(asyncio.run(evaluate(base_url, Path(cache), args.concurrency, questions)))
                after, _ = requests_so_far()
                cold_calls.append(middle - before)
                warm_calls.append(after - middle)
    finally:
        parent.send("stop")
        process.join(timeout=10)

    calls = cold_calls[0]
    sequential = calls * LATENCY
    cold = statistics.median(cold_times)
    ratio = cold / sequential
    print(f"answer correctness + relevance, {questions} questions, {LATENCY * 1000:.0f} ms per request")
    print(f"  requests per cold run: {calls} ({calls / questions:.0f} per question), peak {peak} at once")
    print(f"  concurrency {args.concurrency}; sequential time {sequential:.1f} s")
    print(f"  cold run: median {cold:.2f} s of {runs} (runs: {', '.join(f'{t:.2f}' for t in cold_times)})")
    budget = "" if args.quick else f" (budget < 1/8 = {BUDGET:.3f})"
    print(f"  ratio to sequential: {ratio:.4f} = 1/{1 / ratio:.1f}{budget}")
    print(f"  cached rerun: median {statistics.median(warm_times):.3f} s, requests {max(warm_calls)}")
    # A quick run (CI) only checks that the benchmark works: the time budget is judged in full runs.
    checks = [("cache", max(warm_calls) != 0)] + ([] if args.quick else [("time", ratio >= BUDGET)])
    missed = [name for name, bad in checks if bad]
    if missed:
        print(f"  BUDGET MISSED: {', '.join(missed)}")
        sys.exit(1)
    print("  cache check met" if args.quick else "  budgets met")


if __name__ == "__main__":
    main()
