"""Judge client throughput: requests per second at 16, 64 and 128 calls in flight.

    python benchmarks/bench_judge_throughput.py            # 1500 calls per level, median of 3 runs
    python benchmarks/bench_judge_throughput.py --quick    # 64 calls per level, 1 run, for CI

The loopback OpenAI-compatible server answers each request after 100 ms, in a
separate process as a real endpoint would be (in this one it would compete with the
client for the GIL). Every call is a distinct chat prompt with the on-disk cache on, so
each is a cache miss that is sent, parsed, priced and stored: the whole path a
local-model judge (vLLM and the like) exercises. The ideal rate is in-flight / latency;
the ratio says how far CPU cost keeps the run from it. The CPU time per request of the
client process and of the server process are printed too: on a machine shared with
other work they are the steadier figures, and they say which side limits the rate.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

from timing import announce_quick

from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.testing import FakeOpenAIServer

LATENCY = 0.1
VERDICT = (
    '{"reference_claims_count": 2, "actual_claims_count": 2, "matching_claims_count": 1, "reason": "ok"}'
)


def serve(connection: Connection) -> None:
    """Child process: run the loopback server, send its URL, report its counters when told to stop."""
    with FakeOpenAIServer(latency=LATENCY, chat_text=VERDICT) as server:
        connection.send(server.base_url)
        while connection.recv() == "cpu":
            connection.send(time.process_time())
        connection.send((server.count("chat"), server.max_in_flight))


def server_cpu(server: Connection) -> float:
    server.send("cpu")
    return float(server.recv())


def one_run(server: Connection, base_url: str, concurrency: int, calls: int, run: int) -> tuple[float, ...]:
    """Wall, client CPU and server CPU seconds of `calls` distinct judge calls, `concurrency` in flight."""
    with tempfile.TemporaryDirectory() as cache:
        settings = LLMSettings(
            base_url=base_url, api_key="sk-bench", concurrency=concurrency, cache_dir=Path(cache), timeout=30
        )
        client = JudgeClient(settings)

        async def burst() -> None:
            try:
                await asyncio.gather(
                    *(
                        client.chat(
                            [
                                {"role": "system", "content": "Count the claims; reply with JSON."},
                                {"role": "user", "content": f"run {run} question {index}: which ones?"},
                            ],
                            response_format={"type": "json_object"},
                        )
                        for index in range(calls)
                    )
                )
            finally:
                await client.aclose()

        start, cpu, served = time.perf_counter(), time.process_time(), server_cpu(server)
        asyncio.run(burst())
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        served = server_cpu(server) - served
        assert client.stats.calls_made == calls and client.stats.failures == 0, client.stats
        return seconds, cpu, served


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="64 calls per level, 1 run")
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--in-flight", type=int, nargs="+", default=[16, 64, 128])
    args = parser.parse_args()
    announce_quick(args.quick)
    calls, repeats = (64, 1) if args.quick else (args.calls, args.repeats)
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(target=serve, args=(child,), daemon=True)
    process.start()
    try:
        base_url = parent.recv()
        print(f"{calls} distinct judge calls per level, {LATENCY * 1000:.0f} ms latency, median of {repeats}")
        print("in flight   seconds    req/s  ideal req/s  ratio  client CPU ms/req  server CPU ms/req")
        for concurrency in args.in_flight:
            runs = [one_run(parent, base_url, concurrency, calls, run) for run in range(repeats)]
            seconds, cpu, served = (statistics.median(run[index] for run in runs) for index in range(3))
            ideal = concurrency / LATENCY
            rate = calls / seconds
            print(
                f"{concurrency:>9}  {seconds:8.2f}  {rate:7.0f}  {ideal:11.0f}  {ideal / rate:5.2f}"
                f"  {cpu / calls * 1000:17.2f}  {served / calls * 1000:17.2f}"
            )
        parent.send("stop")
        requests, peak = parent.recv()
        print(f"(the server saw {requests} requests, at most {peak} at once)")
    finally:
        process.join(timeout=10)


if __name__ == "__main__":
    main()
