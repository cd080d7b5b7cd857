"""Paraphrases through the judge client against the loopback OpenAI server (the official SDK, real
sockets): variants kept and rejected as scripted, the cost estimate printed before any call, the
budget honoured during, a rerun answered by the cache, the dry run sending nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from generate_support import RELEASE_1, corpus_command, transformers_by_zone

from pytest_graphrag_eval.testing.fake_openai import FakeOpenAIServer

ZONES = """
  - template_id: substations_in_zone
    parameters: [zone]
    candidates: |
      select ?zone ?zoneIri where { ?zoneIri a cim:SubGeographicalRegion ; cim:IdentifiedObject.name ?zone }
    phrasings:
      - List all substations within bidding zone {{zone}}
    question_id: zone-{{zone}}
    reference_steps:
      - - name: sparql_query
          args:
            query: |
              select ?name where { ?s cim:Substation.Region {{zoneIri}} ; cim:IdentifiedObject.name ?name }
              order by ?name
          required_columns: [name]
    answer: {labels: name}
"""
KEPT = "Name the transformers at substation {{substation}} in zone {{zone}}"
LOST_A_PARAMETER = "Which transformers are there at {{substation}}?"
MISREAD = "How many substations does zone {{zone}} have?"


def variant(text: str) -> str:
    return json.dumps({"question": text})


def verdict(number: int) -> str:
    return json.dumps({"template": number})


# In call order: template 1's two phrasings, then template 2's; a verifier call follows each
# variant that keeps its placeholders.
SCRIPT = [variant(KEPT), verdict(1), variant(LOST_A_PARAMETER), variant(MISREAD), verdict(0)]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAIServer]:
    monkeypatch.chdir(tmp_path)  # the judge cache goes under the current folder
    with FakeOpenAIServer() as running:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", running.base_url)
        yield running


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    path = transformers_by_zone(tmp_path)
    path.write_text(path.read_text("utf-8") + ZONES, encoding="utf-8")
    return path


def generate(templates: Path, *extra: str) -> int:
    out = templates.parent / "corpus.yaml"
    return corpus_command(
        "generate", templates, "--sparql-endpoint", RELEASE_1, "--out", out, "--paraphrases", "1", *extra
    )


def test_variants_are_kept_and_rejected_as_scripted(
    server: FakeOpenAIServer, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.enqueue(*SCRIPT)
    assert generate(templates) == 0
    printed = capsys.readouterr().out
    assert server.count("chat") == len(SCRIPT)
    assert "paraphrases of transformers_of_substation_in_zone: 1 kept, 1 rejected" in printed
    assert f"  kept      {KEPT}\n" in printed
    assert f"  rejected  {LOST_A_PARAMETER}  (it lost the parameter {{{{zone}}}})" in printed
    assert "paraphrases of substations_in_zone: 0 kept, 1 rejected" in printed
    assert f"  rejected  {MISREAD}  (the verifier read it as template none)" in printed
    # The estimate came first, and counted every call the run could make (three variants, three checks).
    assert printed.index("paraphrase cost estimate (before any call):") < printed.index("paraphrases of")
    estimate = printed[: printed.index("paraphrases of")]
    rows = {line.split()[0]: line.split() for line in estimate.splitlines()[2:5]}
    assert rows["paraphrase"][2] == "3" and rows["paraphrase_verifier"][2] == "3" and rows["total"][1] == "6"
    # The verifier saw the variant alone, inside its data block, with the templates listed by number.
    checks = [r.body for r in server.requests if "paraphrase_verifier" in json.dumps(r.body)]
    user = checks[0]["messages"][1]["content"]  # type: ignore[index, call-overload]
    assert f"<variant>\n{KEPT}\n</variant>" in user and "1. List the transformers of substation" in user
    # The kept variant phrases some of the corpus's questions, filled with their values.
    texts = [
        q["question_text"]
        for t in yaml.safe_load((templates.parent / "corpus.yaml").read_text("utf-8"))
        for q in t["questions"]
    ]
    assert any(text.startswith("Name the transformers at substation ") for text in texts)
    assert not any("How many substations" in text or "are there at" in text for text in texts)


def test_a_rerun_is_answered_by_the_cache(
    server: FakeOpenAIServer, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.enqueue(*SCRIPT)
    assert generate(templates) == 0
    first = capsys.readouterr().out
    assert generate(templates) == 0
    assert server.count("chat") == len(SCRIPT)  # nothing sent the second time
    second = capsys.readouterr().out
    assert "paraphrase calls: 0 sent, 5 answered by the cache" in second

    def verdicts(printed: str) -> str:
        return printed[printed.index("paraphrases of") : printed.index("paraphrase calls:")]

    assert verdicts(second) == verdicts(first)


def test_the_budget_stops_the_paraphrasing_and_the_corpus_is_still_written(
    server: FakeOpenAIServer, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.enqueue(*SCRIPT)
    assert generate(templates, "--max-calls", "2") == 0
    printed = capsys.readouterr().out
    assert server.count("chat") == 2
    assert "paraphrasing stopped: " in printed and "budget" in printed
    assert "paraphrases of transformers_of_substation_in_zone: 1 kept, 0 rejected" in printed
    assert "wrote " in printed


def test_a_dry_run_estimates_and_sends_nothing(
    server: FakeOpenAIServer, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generate(templates, "--dry-run") == 0
    printed = capsys.readouterr().out
    assert server.count() == 0
    assert "paraphrase cost estimate (before any call):" in printed and "no corpus written" in printed
    assert not (templates.parent / "corpus.yaml").exists()


def test_a_reply_with_terminal_escapes_is_printed_as_data(
    server: FakeOpenAIServer, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reply is untrusted text: an escape sequence in it must not clear the screen or forge a line."""
    hostile = "\x1b[2J{{substation}} in {{zone}}\x1b]0;owned\x07"
    server.enqueue(variant(hostile), verdict(0), variant("\x1b[31m"), "not json \x1b[2J", verdict(0))
    assert generate(templates) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed
    assert "  rejected  \\x1b[2J{{substation}} in {{zone}}\\x1b]0;owned\\x07  (" in printed
