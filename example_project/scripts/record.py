"""Record the example agent's responses to every corpus question, for replay without the agent.

    python example_project/scripts/record.py              # -> recordings/responses.jsonl
    python example_project/scripts/record.py --regressed  # -> recordings/regression.jsonl

The output is JSONL in the seed's target format, one response per line in
corpus order: what `pytest --graphrag-responses FILE` replays. `--regressed`
records `RegressedGridAgent`, a release with deliberate bugs, so the suite's
failure report and gates can be seen failing.

Like every generated file here, a recording is reproduced byte for byte by running
its script again: the agent's measured `elapsed_sec` (microseconds that differ on
every run) is recorded as a simulated time instead, as its token counts are.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from example_files import EXAMPLE_ROOT, write_atomically
from grid_agent import GridAgent, RegressedGridAgent, load_store

from pytest_graphrag_eval import load_corpus

CORPUS_PATH = EXAMPLE_ROOT / "corpus.yaml"
RECORDINGS = EXAMPLE_ROOT / "recordings"
SECONDS_PER_TOOL_CALL = 0.6  # the simulated time: a model turn per tool call, then the answer's tokens
OUTPUT_TOKENS_PER_SECOND = 40.0


def record(agent: GridAgent, corpus_path: Path = CORPUS_PATH) -> list[dict[str, Any]]:
    """The agent's response to each corpus question, in corpus order."""
    return [
        with_simulated_time(agent.answer(question.question_id, question.question_text))
        for question in load_corpus(corpus_path).questions()
    ]


def with_simulated_time(response: dict[str, Any]) -> dict[str, Any]:
    """The response with the time an LLM agent doing the same work would take instead of the measured one."""
    if "elapsed_sec" not in response:  # an error response has none
        return response
    steps = len(response.get("actual_steps") or [])
    seconds = SECONDS_PER_TOOL_CALL * (steps + 1) + response["output_tokens"] / OUTPUT_TOKENS_PER_SECOND
    return {**response, "elapsed_sec": round(seconds, 3)}


def to_jsonl(responses: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(response, ensure_ascii=False) + "\n" for response in responses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regressed", action="store_true", help="record the regressed agent")
    parser.add_argument("--output", type=Path, help="default: recordings/responses.jsonl or regression.jsonl")
    args = parser.parse_args()
    agent_class = RegressedGridAgent if args.regressed else GridAgent
    output = args.output or RECORDINGS / ("regression.jsonl" if args.regressed else "responses.jsonl")
    write_atomically(output, to_jsonl(record(agent_class(load_store()))))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
