"""Record graphrag-eval 6.6.1's LLM-judged metrics on this folder's data: answer correctness, answer
relevance, a custom evaluation and the retrieval_answer_* / retrieval_context_* metrics of retrieval steps.

graphrag-eval judges through LiteLLM (and RAGAS for retrieval). Here its judge is our loopback
OpenAI-compatible server, answering graphrag-eval's and RAGAS' prompts with the scripted verdicts of
tests/scripted_judge.py, so nothing leaves the machine. Needs Python 3.12 with graphrag-eval[llm] 6.6.1.
Its extra does not bring LiteLLM, which it imports, and RAGAS 0.4.3 needs langchain-community 0.3 and
the openai 1.x SDK
(pip warns that LiteLLM wants openai 2; the chat completion calls used here work with 1.x):

    python3.12 -m venv ge-llm
    ge-llm/bin/pip install "graphrag-eval[llm]==6.6.1" pyyaml litellm \
        "langchain-community==0.3.31" "openai==1.109.1"
    ge-llm/bin/python tests/data/graphrag_eval_judged/record_judged.py

The embedding model is given its endpoint as `api_base`: graphrag-eval 6.6.1 does not pass a `base_url`
on to the embedding client (its requests then go to the provider's public endpoint).

It writes graphrag_eval_results.json: per question the answer keys and the retrieval keys
graphrag-eval put on each actual step, and the statistics of compute_aggregates for both.
tests/test_judged_metrics_differential.py runs our judges on the same data with the same verdicts
and compares.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of LiteLLM's price list
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

import scripted_judge  # noqa: E402  (tests/ is put on the path above)

RETRIEVAL_KEYS = tuple(
    f"retrieval_{side}_{measure}"
    for side in ("answer", "context")
    for measure in ("recall", "precision", "f1")
)
ANSWER_KEYS = (
    "answer_reference_claims_count",
    "answer_actual_claims_count",
    "answer_matching_claims_count",
    "answer_recall",
    "answer_precision",
    "answer_f1",
    "answer_relevance",
    "tone_score",
    "tone_reason",
)
_CUSTOM = re.compile(r"separated by tabs.*# Actual answer\n(.*)$", re.DOTALL)
_INPUT = re.compile(r"input: (\{.*\})\s*Output: *$", re.DOTALL)
_CORRECTNESS = re.compile(
    r"# Reference response\n(.*?)\n\n# Candidate response\n(.*?)\n\n# JSON fields", re.DOTALL
)


def load_fake_server() -> Any:
    """Our loopback server module, loaded by path (it needs only the standard library)."""
    path = TESTS.parent / "pytest_graphrag_eval" / "testing" / "fake_openai.py"
    spec = importlib.util.spec_from_file_location("fake_openai", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_openai"] = module
    spec.loader.exec_module(module)
    return module


def graphrag_eval_judge(body: dict[str, Any]) -> str:
    """Answer graphrag-eval's correctness prompt or a RAGAS context recall / precision prompt."""
    prompt = "\n".join(str(message.get("content")) for message in body["messages"])
    custom = _CUSTOM.search(prompt)
    if custom is not None:
        score, reason = scripted_judge.tone(custom.group(1))
        order = re.findall(r"^- (tone_\w+):", prompt, re.MULTILINE)  # the values in the order asked for
        return "\t".join(str({"tone_score": score, "tone_reason": reason}[name]) for name in order)
    correctness = _CORRECTNESS.search(prompt)
    if correctness is not None:
        counts = scripted_judge.claim_counts(correctness.group(1), correctness.group(2))
        return json.dumps({**counts, "reason": "scripted"})
    found = _INPUT.search(prompt)
    if found is None:
        raise ValueError("not a RAGAS metric prompt")
    data = json.loads(found.group(1))
    if "noncommittal" in prompt:
        return json.dumps(scripted_judge.generated_question(data["response"]))
    if "attributed" in prompt:
        pairs = scripted_judge.attributions(data["answer"], data["context"])
        items = [{"statement": text, "reason": "scripted", "attributed": flag} for text, flag in pairs]
        return json.dumps({"classifications": items})
    verdict = scripted_judge.useful(data["context"], data["answer"])
    return json.dumps({"reason": "scripted", "verdict": verdict})


def answer_keys(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {
        result["question_id"]: {key: result[key] for key in ANSWER_KEYS if key in result}
        for result in results
    }


def step_keys(results: list[dict[str, Any]]) -> dict[str, list[dict[str, float]]]:
    return {
        result["question_id"]: [
            {key: step[key] for key in RETRIEVAL_KEYS if key in step}
            for step in result.get("actual_steps", [])
        ]
        for result in results
    }


def aggregate_keys(aggregates: dict[str, Any]) -> dict[str, Any]:
    per_template = {
        template: {key: value for key, value in stats.get("steps", {}).items() if key in RETRIEVAL_KEYS}
        for template, stats in aggregates["per_template"].items()
    }
    micro = {key: value for key, value in aggregates["micro"].items() if key in RETRIEVAL_KEYS + ANSWER_KEYS}
    return {"per_template": per_template, "micro": micro}


async def record(server: Any) -> dict[str, Any]:
    from graphrag_eval import compute_aggregates, run_evaluation

    reference = yaml.safe_load((HERE / "reference.yaml").read_text(encoding="utf-8"))
    responses = json.loads((HERE / "responses.json").read_text(encoding="utf-8"))
    config = {
        "llm": {
            "generation": {
                "provider": "openai",
                "model": "gpt-4o-mini",
                "base_url": server.base_url,
                "api_key": "sk-local-recording",
            },
            "embedding": {
                "provider": "openai",
                "model": "text-embedding-3-small",
                "api_base": server.base_url,
                "api_key": "sk-local-recording",
            },
        },
        "custom_evaluations": [
            {
                "name": "tone",
                "inputs": ["question", "actual_answer"],
                "instructions": "Does the answer commit to an answer?",
                "outputs": {"tone_score": "1 if it commits, 0 if not", "tone_reason": "one word"},
            }
        ],
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "eval_config.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        results = await run_evaluation(reference, responses, path)
        aggregates = compute_aggregates(results, path)
    return {
        "answers": answer_keys(results),
        "steps": step_keys(results),
        "aggregates": aggregate_keys(aggregates),
    }


def main() -> None:
    fake = load_fake_server()
    with fake.FakeOpenAIServer() as server:
        server.set_chat_handler(graphrag_eval_judge)
        recorded = asyncio.run(record(server))
        if server.handler_errors:
            raise SystemExit(f"the scripted judge failed: {server.handler_errors}")
    python = sys.version.split()[0]
    stack = ", ".join(f"{name} {version(name)}" for name in ("ragas", "litellm", "instructor", "openai"))
    recorded["note"] = (
        f"graphrag-eval {version('graphrag-eval')} ({stack}) on Python {python}, by record_retrieval.py"
    )
    target = HERE / "graphrag_eval_results.json"
    target.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {target.name}")


if __name__ == "__main__":
    main()
