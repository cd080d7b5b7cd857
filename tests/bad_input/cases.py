"""The bad-input matrix: every case a careless or unlucky user could produce, and what must be said.

A case writes a small project (corpus, responses, ini, conftest, answers config),
runs the plugin with its arguments and lists the fragments the output must hold:
the file, the template or question id and the field where they apply. `outcome`
says how the run must end:

- "usage": a usage error at start-up (nothing answered, scored or judged),
- "collection": a collection error of the corpus file (nothing scored),
- "failed": the run completes and the named question fails (a per-question error).

`library` names the loader the library API test calls with the same files
("corpus", "corpora", "responses"), or "result" when the library returns the
per-question error in the result instead of raising.
"""

from __future__ import annotations

import codecs
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from plugin_support import corpus, good_responses, response

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
LIVE = ["--graphrag-corpus", "corpus.yaml"]
SMALL_CAP_ENV = {"GRAPHRAG_EVAL_MAX_INPUT_MB": "0.01"}  # 10 KiB


@dataclass(frozen=True)
class Case:
    """One bad input and the fragments its message must contain."""

    id: str
    expect: tuple[str, ...]
    outcome: str = "usage"
    files: dict[str, str | bytes] = field(default_factory=dict)
    args: tuple[str, ...] = tuple(REPLAY)
    ini: str | None = None
    conftest: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    library: str | None = None
    failed_question: str | None = None

    def all_files(self) -> dict[str, str | bytes]:
        defaults: dict[str, str | bytes] = {"corpus.yaml": corpus_yaml()}
        if "--graphrag-responses" in self.args:
            defaults["responses.jsonl"] = responses_jsonl()
        shadowed = {name for name in defaults if any(other.startswith(name + "/") for other in self.files)}
        return {**{k: v for k, v in defaults.items() if k not in shadowed}, **self.files}


def corpus_yaml(mutate: Callable[[list[dict[str, Any]]], Any] | None = None) -> str:
    data = corpus()
    if mutate is not None:
        mutate(data)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def responses_jsonl(mutate: Callable[[list[dict[str, Any]]], Any] | None = None) -> str:
    data = copy.deepcopy(good_responses())
    if mutate is not None:
        mutate(data)
    return "".join(json.dumps(item) + "\n" for item in data)


def _q(data: list[dict[str, Any]], template: int = 0, question: int = 0) -> dict[str, Any]:
    return data[template]["questions"][question]


def _step(data: list[dict[str, Any]]) -> dict[str, Any]:
    return _q(data)["reference_steps"][0][0]


def _r(data: list[dict[str, Any]], key: str, value: Any, index: int = 0) -> None:
    data[index][key] = value


def _r_step(data: list[dict[str, Any]], key: str, value: Any) -> None:
    data[0]["actual_steps"][0][key] = value


def _span(name: str, span_id: str, attributes: dict[str, str], parent: str | None = None) -> dict[str, Any]:
    """One OTLP/JSON span of trace 1 (string attributes)."""
    span: dict[str, Any] = {
        "traceId": "5b8aa5a2d2c872e8321cf37308d69df2",
        "spanId": span_id,
        "name": name,
        "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()],
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def _otlp(spans: list[dict[str, Any]], service: str = "agent") -> str:
    """An OTLP/JSON trace export of `spans`, from one service."""
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]})


def _messages_line(question_id: str, messages: Any) -> str:
    """A message-list JSONL file of one line."""
    return json.dumps({"question_id": question_id, "messages": messages}) + "\n"


def _corpus_case(case_id: str, mutate: Callable[[Any], Any], *expect: str, library: str = "corpus") -> Case:
    return Case(
        case_id,
        ("corpus.yaml", *expect),
        "collection",
        files={"corpus.yaml": corpus_yaml(mutate)},
        library=library,
    )


def _raw_corpus_case(
    case_id: str, text: str | bytes, *expect: str, env: dict[str, str] | None = None
) -> Case:
    return Case(
        case_id,
        ("corpus.yaml", *expect),
        "collection",
        files={"corpus.yaml": text},
        env=env or {},
        library="corpus",
    )


def _responses_case(case_id: str, mutate: Callable[[Any], Any], *expect: str) -> Case:
    return Case(
        case_id,
        ("responses.jsonl", *expect),
        files={"responses.jsonl": responses_jsonl(mutate)},
        library="responses",
    )


def _raw_responses_case(
    case_id: str, text: str | bytes, *expect: str, env: dict[str, str] | None = None
) -> Case:
    return Case(
        case_id,
        ("responses.jsonl", *expect),
        files={"responses.jsonl": text},
        env=env or {},
        library="responses",
    )


def _unscorable_step_case(case_id: str, mutate: Callable[[Any], Any], *expect: str) -> Case:
    """A per-question steps_score_error that names the responses file, line, question and step field."""
    return Case(
        case_id,
        (
            "corpus.yaml",
            "steps_score_error: unscorable agent steps: ",
            "responses.jsonl:1, question 'q1'",
            *expect,
        ),
        "failed",
        files={"responses.jsonl": responses_jsonl(mutate)},
        args=(*REPLAY, "--graphrag-threshold", "steps_score>=1"),
        library="result",
        failed_question="q1",
    )


def _option_case(case_id: str, args: tuple[str, ...], *expect: str) -> Case:
    return Case(case_id, expect, args=(*REPLAY, *args))


def _ini_case(case_id: str, ini: str, *expect: str) -> Case:
    return Case(case_id, expect, ini=ini)


LIVE_GOOD = "{'actual_answer': 'The names are Alpha, Beta.', 'actual_steps': []}"


def _hook_case(case_id: str, body: str, *expect: str, args: tuple[str, ...] = ()) -> Case:
    """The agent hook answers q1 with `body` (Python source) and the other questions well."""
    conftest = (
        "import math, time\n"
        "def pytest_graphrag_respond(question, config):\n"
        "    if question.question_id == 'q1':\n"
        f"        {body}\n"
        f"    return {LIVE_GOOD}\n"
    )
    return Case(
        case_id,
        ("corpus.yaml", "q1", *expect),
        "failed",
        args=(*LIVE, *args),
        conftest=conftest,
        failed_question="q1",
    )


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]\n"
    for prev, name in zip("abcdefghi", "bcdefghij", strict=True)
)
GOOD_CORPUS = corpus_yaml()
TWO_FILES = {
    "corpus/a.yaml": corpus_yaml(),
    "corpus/b.yaml": yaml.safe_dump(
        [{"template_id": "more", "questions": [{"id": "q2", "question_text": "Again?"}]}], sort_keys=False
    ),
}
ANSWERS = ("--graphrag-answers-config", "answers.yaml")


def _answers_case(case_id: str, text: str | bytes, *expect: str) -> Case:
    return Case(case_id, ("answers.yaml", *expect), files={"answers.yaml": text}, args=(*REPLAY, *ANSWERS))


CORPUS_CASES = [
    _raw_corpus_case("corpus-not-a-list", "foo: 1\n", "a corpus must be a list"),
    _raw_corpus_case("corpus-empty-file", "", "a corpus must be a list"),
    _raw_corpus_case("corpus-mapping-without-templates", "settings: {}\n", "a corpus must be a list"),
    _raw_corpus_case("corpus-template-not-mapping", "- just text\n", "template #1 must be a mapping"),
    _corpus_case(
        "template-id-missing", lambda d: d[0].pop("template_id"), "field 'template_id'", "is missing"
    ),
    _corpus_case("template-id-empty", lambda d: d[0].update(template_id=" "), "field 'template_id'", "empty"),
    _corpus_case(
        "template-id-list", lambda d: d[0].update(template_id=[1]), "field 'template_id'", "must be text"
    ),
    _corpus_case(
        "questions-missing", lambda d: d[0].pop("questions"), "template 'names'", "field 'questions'"
    ),
    _corpus_case(
        "questions-empty", lambda d: d[0].update(questions=[]), "template 'names'", "field 'questions'"
    ),
    _corpus_case(
        "question-not-mapping",
        lambda d: d[0]["questions"].append("q9"),
        "template 'names'",
        "field 'questions'",
    ),
    _corpus_case(
        "question-id-missing", lambda d: _q(d).pop("id"), "template 'names'", "field 'id'", "is missing"
    ),
    _corpus_case(
        "question-id-mapping", lambda d: _q(d).update(id={"a": 1}), "template 'names'", "field 'id'"
    ),
    _corpus_case(
        "question-text-missing",
        lambda d: _q(d).pop("question_text"),
        "question 'q1'",
        "field 'question_text'",
    ),
    _corpus_case(
        "question-text-empty",
        lambda d: _q(d).update(question_text=""),
        "question 'q1'",
        "field 'question_text'",
    ),
    _corpus_case(
        "question-id-duplicate-in-file",
        lambda d: _q(d, 1).update(id="q1"),
        "template 'others', question 'q1'",
        "duplicate question id",
        "first defined at corpus.yaml:",
    ),
    _corpus_case(
        "template-id-duplicate",
        lambda d: d[1].update(template_id="names"),
        "template 'names'",
        "field 'template_id'",
        "duplicate template id",
        "first defined at corpus.yaml:1",
    ),
    Case(
        "question-id-duplicate-across-files",
        ("corpus/b.yaml", "corpus/a.yaml", "question 'q2'", "field 'id'", "duplicate question id"),
        "collection",
        files=TWO_FILES,
        args=("--graphrag-corpus", "corpus", "--graphrag-responses", "responses.jsonl"),
        library="corpora",
    ),
    _corpus_case(
        "reference-steps-not-lists",
        lambda d: _q(d).update(reference_steps=[{"name": "x"}]),
        "question 'q1'",
        "field 'reference_steps'",
        "list of lists",
    ),
    _corpus_case(
        "reference-steps-empty-group",
        lambda d: _q(d).update(reference_steps=[[]]),
        "question 'q1'",
        "field 'reference_steps[0]'",
        "empty group",
    ),
    _corpus_case(
        "reference-step-not-mapping",
        lambda d: _q(d).update(reference_steps=[["sparql"]]),
        "question 'q1'",
        "field 'reference_steps[0][0]'",
    ),
    _corpus_case(
        "reference-step-name-missing",
        lambda d: _step(d).pop("name"),
        "question 'q1'",
        "field 'reference_steps[0][0].name'",
    ),
    _corpus_case(
        "reference-answer-mapping",
        lambda d: _q(d).update(reference_answer={"a": 1}),
        "question 'q1'",
        "field 'reference_answer'",
    ),
    _corpus_case("xfail-number", lambda d: _q(d).update(xfail=3), "question 'q1'", "field 'xfail'"),
    _corpus_case(
        "question-threshold-typo",
        lambda d: _q(d).update(thresholds=["steps_score=>0.8"]),
        "question 'q1'",
        "field 'thresholds[0]'",
        "invalid threshold",
        library="corpus_settings",
    ),
    _corpus_case(
        "template-thresholds-number",
        lambda d: d[0].update(thresholds=5),
        "template 'names'",
        "field 'thresholds'",
        library="corpus_settings",
    ),
    Case(
        "corpus-thresholds-bad-limit",
        ("corpus.yaml", "field 'thresholds.steps_score'"),
        "collection",
        files={"corpus.yaml": yaml.safe_dump({"thresholds": {"steps_score": "high"}, "templates": corpus()})},
        library="corpus_settings",
    ),
    _corpus_case(
        "question-threshold-beyond-float",
        lambda d: _q(d).update(thresholds={"steps_score": 10**400}),
        "question 'q1'",
        "field 'thresholds.steps_score'",
        "beyond a float's range",
        library="corpus_settings",
    ),
    Case(
        "corpus-threshold-beyond-float",
        ("corpus.yaml", "field 'thresholds.answer_f1'", "beyond a float's range"),
        "collection",
        files={"corpus.yaml": yaml.safe_dump({"thresholds": {"answer_f1": 10**400}, "templates": corpus()})},
        library="corpus_settings",
    ),
    Case(
        "corpus-gate-typo",
        ("corpus.yaml", "gates", "steps_score.mean>>0.9"),
        "collection",
        files={"corpus.yaml": yaml.safe_dump({"gates": ["steps_score.mean>>0.9"], "templates": corpus()})},
        library="corpus_settings",
    ),
    _raw_corpus_case("yaml-syntax", "- template_id: a\n  questions: [\n", "corpus.yaml:", "invalid YAML"),
    _raw_corpus_case(
        "yaml-tab-indent", "- template_id: a\n\tquestions: []\n", "corpus.yaml:2", "invalid YAML"
    ),
    _raw_corpus_case(
        "yaml-duplicate-key",
        GOOD_CORPUS.replace("  questions:", "  template_id: again\n  questions:", 1),
        "corpus.yaml:2",
        "'template_id' appears twice",
    ),
    _raw_corpus_case("yaml-alias-bomb", ALIAS_BOMB, "alias bomb"),
    _raw_corpus_case("yaml-recursive-alias", "- &a [*a]\n", "recursive alias"),
    _raw_corpus_case("yaml-two-documents", GOOD_CORPUS + "---\n" + GOOD_CORPUS, "single document"),
    _raw_corpus_case("yaml-nested-too-deeply", "[" * 20000, "nested too deeply"),
    _raw_corpus_case("yaml-python-tag", "- !!python/object:os.system {}\n", "corpus.yaml:1", "invalid YAML"),
]

TURTLE_REFERENCE = {"output_media_type": "text/turtle", "output": "<urn:s1> <urn:name> 'Alpha' ."}


def _graph_reference(data: list[dict[str, Any]]) -> None:
    step = _step(data)
    step.update(TURTLE_REFERENCE)
    step.pop("required_columns")


def _truncated_graph_answer(data: list[dict[str, Any]]) -> None:
    data[0]["actual_steps"][0]["output"] = "<urn:s1> <urn:name> "


REFERENCE_CONTENT_CASES = [
    Case(
        "reference-rdf-does-not-parse",
        ("corpus.yaml", "q1", "steps_score_error", "reference_steps[0][0]", "not valid Turtle", "line 1"),
        "failed",
        files={
            "corpus.yaml": corpus_yaml(lambda d: (_graph_reference(d), _step(d).update(output="ex:a ex:b .")))
        },
        args=(*REPLAY, "--graphrag-threshold", "steps_score>=1"),
        library="result",
        failed_question="q1",
    ),
    Case(
        "agent-rdf-does-not-parse",
        (
            "corpus.yaml",
            "q1",
            "steps_output_error",
            "question 'q1'",
            "'call_q1'",
            "not valid Turtle",
            "line 1",
        ),
        "failed",
        files={
            "corpus.yaml": corpus_yaml(_graph_reference),
            "responses.jsonl": responses_jsonl(_truncated_graph_answer),
        },
        args=(*REPLAY, "--graphrag-threshold", "steps_score>=1"),
        library="result",
        failed_question="q1",
    ),
    Case(
        "reference-required-column-absent",
        ("corpus.yaml", "q1", "steps_score_error", "reference_steps[0][0]", "'nope'"),
        "failed",
        files={"corpus.yaml": corpus_yaml(lambda d: _step(d).update(required_columns=["s", "nope"]))},
        args=(*REPLAY, "--graphrag-threshold", "steps_score>=1"),
        library="result",
        failed_question="q1",
    ),
    Case(
        "reference-media-type-not-text",
        ("corpus.yaml", "q1", "steps_score_error", "output_media_type", "got 5"),
        "failed",
        files={"corpus.yaml": corpus_yaml(lambda d: _step(d).update(output_media_type=5))},
        args=(*REPLAY, "--graphrag-threshold", "steps_score>=1"),
        library="result",
        failed_question="q1",
    ),
]

ENCODING_CASES = [
    _raw_corpus_case(
        "corpus-latin-1", GOOD_CORPUS.replace("one", "oné").encode("latin-1"), "not UTF-8", "line 4"
    ),
    _raw_corpus_case("corpus-binary", bytes(range(256)) * 4, "looks binary"),
    _raw_corpus_case("corpus-utf16-without-bom", GOOD_CORPUS.encode("utf-16-le"), "byte-order mark"),
    _raw_corpus_case(
        "corpus-utf16-bom-truncated", codecs.BOM_UTF16_LE + GOOD_CORPUS.encode("utf-16-le")[:-1], "UTF-16"
    ),
    _raw_corpus_case("corpus-too-large", GOOD_CORPUS * 10, "larger than 0.01 MB", env=SMALL_CAP_ENV),
    # a cap that is no size ended in a ValueError or OverflowError traceback (nan, inf, 1e400), or was
    # replaced by the default (text) or by a cap of 1 KB reported as "1 MB" (0, negatives) without a word
    *(
        Case(
            f"input-cap-{value}",
            (f"GRAPHRAG_EVAL_MAX_INPUT_MB must be a number of megabytes > 0, got {value!r}",),
            "usage",  # the responses file is read, and refused, before the corpus is collected
            files={"corpus.yaml": GOOD_CORPUS},
            env={"GRAPHRAG_EVAL_MAX_INPUT_MB": value},
            library="corpus",
        )
        for value in ("nan", "inf", "1e400", "0", "-5", "lots")
    ),
    _raw_responses_case(
        "responses-latin-1", responses_jsonl().replace("Alpha", "Alphä").encode("latin-1"), "not UTF-8"
    ),
    _raw_responses_case("responses-binary", b"\x00\x01\x02PK\x03\x04" * 50, "looks binary"),
    _raw_responses_case(
        "responses-utf16-without-bom", responses_jsonl().encode("utf-16-be"), "byte-order mark"
    ),
    _raw_responses_case("responses-too-large", responses_jsonl() * 20, "larger than", env=SMALL_CAP_ENV),
    Case(
        "responses-path-is-folder",
        ("responses.jsonl", "is a folder"),
        files={"responses.jsonl/keep.txt": "x"},
        library="responses",
    ),
    Case(
        "responses-path-missing",
        ("missing.jsonl", "cannot read"),
        args=("--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "missing.jsonl"),
        library="responses",
    ),
    Case(
        "corpus-folder-without-yaml",
        ("empty", "no *.yaml"),
        files={"empty/notes.txt": "x"},
        args=("--graphrag-corpus", "empty", "--graphrag-responses", "responses.jsonl"),
    ),
    Case(
        "corpus-path-missing",
        ("nowhere.yaml", "not found"),
        args=("--graphrag-corpus", "nowhere.yaml", "--graphrag-responses", "responses.jsonl"),
    ),
]

RESPONSE_CASES = [
    _raw_responses_case(
        "responses-invalid-json-line", responses_jsonl() + "{broken\n", "responses.jsonl:4", "invalid JSON"
    ),
    _raw_responses_case("responses-list-of-numbers", "[1, 2]", "must be an object"),
    _raw_responses_case("responses-nested-too-deeply", "[" * 100000 + "]" * 100000, "nested too deeply"),
    _raw_responses_case(
        "responses-line-number-past-pythons-digits",
        responses_jsonl() + '{"question_id": "q9", "elapsed_sec": 1' + "0" * 4400 + "}\n",
        "responses.jsonl:4",
        "a number of more than 4300 digits",
    ),
    _raw_responses_case(
        "responses-document-number-past-pythons-digits",
        '[{"question_id": "q1", "input_tokens": 1' + "0" * 4400 + "}]",
        "invalid JSON: a number of more than 4300 digits",
    ),
    _responses_case("response-question-id-missing", lambda d: d[0].pop("question_id"), "field 'question_id'"),
    _responses_case(
        "response-duplicate", lambda d: d.append(copy.deepcopy(d[0])), "question 'q1'", "duplicate response"
    ),
    _raw_responses_case(
        "response-key-mismatch",
        json.dumps({"q1": {**response("q1"), "question_id": "q2"}}),
        "field 'question_id'",
        "does not match its key 'q1'",
    ),
    _responses_case(
        "answer-not-text", lambda d: _r(d, "actual_answer", 42), "question 'q1'", "field 'actual_answer'"
    ),
    _responses_case(
        "input-tokens-negative", lambda d: _r(d, "input_tokens", -5), "question 'q1'", "field 'input_tokens'"
    ),
    _responses_case(
        "output-tokens-text",
        lambda d: _r(d, "output_tokens", "ten"),
        "question 'q1'",
        "field 'output_tokens'",
    ),
    _responses_case(
        "total-tokens-fraction", lambda d: _r(d, "total_tokens", 1.5), "question 'q1'", "whole number"
    ),
    _responses_case(
        "total-tokens-bool", lambda d: _r(d, "total_tokens", True), "question 'q1'", "field 'total_tokens'"
    ),
    _responses_case(
        "elapsed-nan", lambda d: _r(d, "elapsed_sec", float("nan")), "question 'q1'", "field 'elapsed_sec'"
    ),
    _responses_case(
        "elapsed-infinity",
        lambda d: _r(d, "elapsed_sec", float("inf")),
        "question 'q1'",
        "field 'elapsed_sec'",
    ),
    _responses_case(
        "input-tokens-beyond-float",
        lambda d: _r(d, "input_tokens", 10**400),
        "question 'q1'",
        "field 'input_tokens'",
        "beyond a float's range",
    ),
    _raw_responses_case(
        "elapsed-literal-1e400",
        responses_jsonl().replace('"elapsed_sec": 1.5', '"elapsed_sec": 1e400', 1),
        "question 'q1'",
        "field 'elapsed_sec'",
    ),
    _responses_case(
        "elapsed-negative", lambda d: _r(d, "elapsed_sec", -1), "question 'q1'", "field 'elapsed_sec'"
    ),
    _responses_case(
        "steps-not-list", lambda d: _r(d, "actual_steps", {"a": 1}), "question 'q1'", "field 'actual_steps'"
    ),
    _responses_case(
        "step-not-object",
        lambda d: _r(d, "actual_steps", ["sparql"]),
        "question 'q1'",
        "field 'actual_steps[0]'",
    ),
    _responses_case(
        "step-name-missing",
        lambda d: d[0]["actual_steps"][0].pop("name"),
        "question 'q1'",
        "actual_steps[0].name",
    ),
    _unscorable_step_case(
        "step-status-ok",
        lambda d: _r_step(d, "status", "ok"),
        "field 'actual_steps[0].status': must be success or error, got 'ok'",
    ),
    _unscorable_step_case(
        "step-status-failed",
        lambda d: _r_step(d, "status", "failed"),
        "field 'actual_steps[0].status': must be success or error, got 'failed'",
    ),
    _unscorable_step_case(
        "step-status-missing",
        lambda d: d[0]["actual_steps"][0].pop("status"),
        "field 'actual_steps[0].status': is missing (expected success or error)",
    ),
    _unscorable_step_case(
        "step-output-number",
        lambda d: _r_step(d, "output", 42),
        "field 'actual_steps[0].output': a sparql_query output must be SPARQL results JSON (text or an "
        "object), got int 42",
    ),
    _responses_case(
        "response-status-failed",
        lambda d: _r(d, "status", "failed"),
        "responses.jsonl:1, question 'q1', field 'status': must be success or error, got 'failed'",
    ),
    _raw_responses_case(
        "responses-answer-text-by-id",
        json.dumps({"q1": "Alpha, Beta", "q2": "Gamma", "q3": "Delta, Epsilon"}),
        "responses.jsonl, question 'q1': a response must be an object, got text; an answer alone is written "
        '{"actual_answer": "..."}',
    ),
]

TRACE_CASES = [
    _raw_responses_case(
        "trace-otlp-unrelated-service",
        _otlp([_span("GET /", "h1", {"http.route": "/"})], service="web-frontend"),
        "from service web-frontend",
        "not an agent trace",
    ),
    _raw_responses_case(
        "trace-otlp-tool-span-without-name",
        _otlp(
            [
                _span("agent", "a1", {"gen_ai.operation.name": "invoke_agent", "graphrag.question_id": "q1"}),
                _span("execute_tool", "t1", {"gen_ai.operation.name": "execute_tool"}, parent="a1"),
            ]
        ),
        "span 'execute_tool'",
        "field 'gen_ai.tool.name'",
        "without a tool name",
    ),
    _raw_responses_case(
        "trace-messages-not-a-list",
        _messages_line("q1", "hello"),
        "responses.jsonl:1",
        "question 'q1'",
        "field 'messages'",
        "must be a list of messages",
    ),
    _raw_responses_case(
        "trace-tool-message-without-call",
        _messages_line("q1", [{"role": "tool", "tool_call_id": "call_9", "content": "{}"}]),
        "responses.jsonl:1",
        "field 'messages[0].tool_call_id'",
        "no matching tool call",
    ),
    _raw_responses_case(
        "trace-messages-of-no-known-format",
        _messages_line("q1", [{"text": "hello"}]),
        "responses.jsonl:1",
        "cannot tell the message format",
    ),
]

OPTION_CASES = [
    _option_case("llm-concurrency-zero", ("--graphrag-concurrency", "0"), "graphrag_concurrency", "got 0"),
    _option_case("llm-concurrency-huge", ("--graphrag-concurrency", "5000"), "graphrag_concurrency", "5000"),
    _option_case(
        "llm-concurrency-text", ("--graphrag-concurrency", "many"), "--graphrag-concurrency", "'many'"
    ),
    _option_case(
        "agent-concurrency-zero", ("--graphrag-agent-concurrency", "0"), "graphrag_agent_concurrency"
    ),
    _option_case(
        "agent-concurrency-negative", ("--graphrag-agent-concurrency", "-3"), "graphrag_agent_concurrency"
    ),
    _option_case("judge-repeats-zero", ("--graphrag-judge-repeats", "0"), "graphrag_judge_repeats"),
    _option_case("judge-repeats-huge", ("--graphrag-judge-repeats", "1000"), "graphrag_judge_repeats"),
    _option_case("agent-timeout-zero", ("--graphrag-agent-timeout", "0"), "graphrag_agent_timeout"),
    _option_case(
        "agent-timeout-text", ("--graphrag-agent-timeout", "soon"), "graphrag_agent_timeout", "'soon'"
    ),
    _option_case("agent-timeout-nan", ("--graphrag-agent-timeout", "nan"), "graphrag_agent_timeout"),
    _option_case("agent-timeout-infinite", ("--graphrag-agent-timeout", "inf"), "graphrag_agent_timeout"),
    _option_case(
        "steps-scope-unknown", ("--graphrag-steps-scope", "first"), "--graphrag-steps-scope", "'first'"
    ),
    _option_case("judge-unknown", ("--graphrag-judge", "gpt"), "--graphrag-judge", "'gpt'"),
    _option_case(
        "threshold-typo",
        ("--graphrag-threshold", "steps_score=>0.8"),
        "--graphrag-threshold",
        "steps_score=>0.8",
    ),
    _option_case("threshold-no-operator", ("--graphrag-threshold", "steps_score"), "--graphrag-threshold"),
    _option_case("gate-typo", ("--graphrag-gate", "steps_score.mean>>0.9"), "steps_score.mean>>0.9"),
    _option_case(
        "gate-unknown-statistic", ("--graphrag-gate", "steps_score.avg>=0.9"), "unknown statistic 'avg'"
    ),
    _option_case(
        "record-with-responses",
        ("--graphrag-record", "rec.jsonl"),
        "--graphrag-record",
        "--graphrag-responses",
    ),
    Case(
        "report-folder-is-a-file",
        ("--graphrag-report", "afile", "is a file"),
        files={"afile": "x"},
        args=(*REPLAY, "--graphrag-report", "afile/report.json"),
    ),
    _option_case("report-is-a-folder", ("--graphrag-report", "."), "--graphrag-report", "is a folder"),
    Case(
        "record-folder-is-a-file",
        ("--graphrag-record", "afile", "is a file"),
        files={"afile": "x"},
        args=(*LIVE, "--graphrag-record", "afile/rec.jsonl"),
        conftest=f"def pytest_graphrag_respond(question, config):\n    return {LIVE_GOOD}\n",
    ),
    Case(
        "cache-folder-is-a-file",
        ("judge cache folder", "afile", "is a file"),
        files={"afile": "x"},
        args=(*REPLAY, "--graphrag-judge", "llm", "--graphrag-cache-dir", "afile"),
        env={"OPENAI_API_KEY": "sk-test-not-used", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    ),
    Case(
        "llm-judge-without-key",
        ("OPENAI_API_KEY",),
        args=(*REPLAY, "--graphrag-judge", "llm"),
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    ),
    _option_case("correctness-prompt-missing", ("--graphrag-correctness-prompt", "nope.txt"), "nope.txt"),
    _option_case("answers-config-missing", ANSWERS, "answers.yaml", "cannot read"),
    _option_case("no-responses-no-hook", (), "--graphrag-responses", "pytest_graphrag_respond"),
]
# The last case runs without --graphrag-responses: no responses file is written.
OPTION_CASES[-1] = Case(OPTION_CASES[-1].id, OPTION_CASES[-1].expect, args=tuple(LIVE))

ANSWERS_CASES = [
    _answers_case("answers-config-not-mapping", "- a\n- b\n", "must be a YAML mapping"),
    _answers_case("answers-config-invalid-yaml", "relevance: [\n", "answers.yaml:", "invalid YAML"),
    _answers_case("answers-config-binary", b"\x00\xff" * 64, "looks binary"),
    _answers_case("answers-config-unknown-key", "judgee: llm\n", "judgee"),
    _answers_case("answers-config-relevance-not-bool", "relevance: maybe\n", "relevance", "true or false"),
    _answers_case("answers-config-repeats-text", "repeats: often\n", "repeats", "whole number"),
    _answers_case("answers-config-alias-bomb", ALIAS_BOMB, "alias bomb"),
    _answers_case("answers-config-duplicate-key", "judge: none\njudge: lexical\n", "'judge' appears twice"),
]

INI_CASES = [
    _ini_case("ini-concurrency-zero", "graphrag_concurrency = 0", "graphrag_concurrency", "got 0"),
    _ini_case(
        "ini-agent-concurrency-text",
        "graphrag_agent_concurrency = many",
        "graphrag_agent_concurrency",
        "'many'",
    ),
    _ini_case("ini-steps-scope-unknown", "graphrag_steps_scope = first", "graphrag_steps_scope", "'first'"),
    _ini_case("ini-judge-unknown", "graphrag_judge = gpt", "graphrag_judge", "'gpt'"),
    _ini_case(
        "ini-threshold-typo", "graphrag_thresholds = steps_score>>1", "graphrag_thresholds", "steps_score>>1"
    ),
    _ini_case("ini-gate-typo", "graphrag_gates = steps_score.mean=<1", "steps_score.mean=<1"),
    _ini_case("ini-agent-timeout-negative", "graphrag_agent_timeout = -1", "graphrag_agent_timeout"),
    _ini_case("ini-judge-repeats-zero", "graphrag_judge_repeats = 0", "graphrag_judge_repeats"),
    Case(
        "ini-corpus-missing",
        ("missing.yaml", "not found"),
        args=("--graphrag-responses", "responses.jsonl"),
        ini="graphrag_corpus = missing.yaml",
    ),
    Case(
        "ini-report-folder-is-a-file",
        ("--graphrag-report", "afile", "is a file"),
        files={"afile": "x"},
        ini="graphrag_report = afile/report.json",
    ),
]

HOOK_CASES = [
    _hook_case(
        "hook-returns-text",
        "return 'Alpha, Beta'",
        "the agent returned a malformed response: agent hook pytest_graphrag_respond, question 'q1': "
        "a response must be an object, got text",
    ),
    _hook_case(
        "hook-status-failed",
        "return {'actual_answer': 'x', 'status': 'failed'}",
        "agent hook pytest_graphrag_respond, question 'q1', field 'status': must be success or error, "
        "got 'failed'",
    ),
    _hook_case(
        "hook-question-id-mismatch",
        "return {'question_id': 'q2', 'actual_answer': 'x'}",
        "agent hook pytest_graphrag_respond, question 'q1', field 'question_id': does not match the "
        "question asked 'q1'",
    ),
    _hook_case(
        "hook-step-output-number",
        "return {'actual_answer': 'x', 'actual_steps': [{'name': 'sparql_query', 'status': 'success', "
        "'output': 7}]}",
        "steps_score_error",
        "agent hook pytest_graphrag_respond, question 'q1', field 'actual_steps[0].output'",
        "got int 7",
        args=("--graphrag-threshold", "steps_score>=0"),
    ),
    _hook_case("hook-returns-list", "return [1, 2]", "malformed response", "must be an object"),
    _hook_case("hook-answer-number", "return {'actual_answer': 7}", "field 'actual_answer'"),
    _hook_case(
        "hook-tokens-negative", "return {'actual_answer': 'x', 'input_tokens': -1}", "field 'input_tokens'"
    ),
    _hook_case(
        "hook-elapsed-nan", "return {'actual_answer': 'x', 'elapsed_sec': math.nan}", "field 'elapsed_sec'"
    ),
    _hook_case(
        "hook-tokens-beyond-float",
        "return {'actual_answer': 'x', 'output_tokens': 10**400}",
        "field 'output_tokens'",
        "beyond a float's range",
    ),
    _hook_case(
        "hook-steps-mapping", "return {'actual_answer': 'x', 'actual_steps': {}}", "field 'actual_steps'"
    ),
    _hook_case(
        "hook-raises", "raise ValueError('backend down')", "the agent hook raised ValueError: backend down"
    ),
    _hook_case("hook-returns-none", "return None", "no response"),
    _hook_case(
        "hook-hangs",
        "time.sleep(20)",
        "did not answer within 0.3 s",
        args=("--graphrag-agent-timeout", "0.3"),
    ),
    _hook_case(
        "hook-step-status-ok",
        "return {'actual_answer': 'x', 'actual_steps': [{'name': 'q', 'status': 'ok', 'id': 'a'}]}",
        "agent hook pytest_graphrag_respond, question 'q1', field 'actual_steps[0].status'",
        "'ok'",
        args=("--graphrag-threshold", "steps_score>=0"),
    ),
]

CASES = [
    *CORPUS_CASES,
    *REFERENCE_CONTENT_CASES,
    *ENCODING_CASES,
    *RESPONSE_CASES,
    *TRACE_CASES,
    *OPTION_CASES,
    *ANSWERS_CASES,
    *INI_CASES,
    *HOOK_CASES,
]
