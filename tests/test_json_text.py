"""JSON parsing with or without orjson gives the standard library's values and errors."""

from __future__ import annotations

import json

import pytest

from pytest_graphrag_eval.formats import json_text

TEXTS = [
    '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": "x"}}]}}',
    "[1, 2.5, -0.0, 1e400, true, null]",
    "[NaN, Infinity, -Infinity]",  # not JSON, but the standard library accepts it
    "[123456789012345678901234567890]",  # beyond 64 bits
    '["\\ud800"]',  # a lone surrogate
    '{"k": 1, "k": 2}',
    '{"label": {"value": "Zürich 東京 Москва", "xml:lang": "de"}, "n": 12345678901234567890123}',
    '["São Paulo", 9223372036854775807, 18446744073709551616]',  # the long run after non-ASCII text
    '["Łódź \\ud800", "é"]',  # an escaped lone surrogate in non-ASCII text
    '["\ud800 raw"]',  # a raw lone surrogate: not encodable as UTF-8
]
BROKEN = ["", "{", "[1,]", "CONSTRUCT { ?s ?p ?o }", '{"a": 1} trailing', '{"Zürich": 1,}', '["\ud800", ']


@pytest.fixture(params=["orjson", "json"])
def library(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "orjson":
        pytest.importorskip("orjson")
    else:
        monkeypatch.setattr(json_text, "orjson", None)
    return str(request.param)


@pytest.mark.parametrize("text", TEXTS)
def test_values_are_the_standard_librarys(library: str, text: str) -> None:
    ours, standard = json_text.loads(text), json.loads(text)
    assert repr(ours) == repr(standard)  # repr: NaN != NaN, and -0.0 == 0.0


@pytest.mark.parametrize("text", BROKEN)
def test_errors_are_the_standard_librarys(library: str, text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        json_text.loads(text)
    with pytest.raises(json.JSONDecodeError) as standard:
        json.loads(text)
    assert (ours.value.msg, ours.value.lineno, ours.value.colno) == (
        standard.value.msg,
        standard.value.lineno,
        standard.value.colno,
    )


def test_loads_lines_gives_each_lines_value_or_declines() -> None:
    """The bytes path reads what `loads` reads line by line, and declines whenever msgspec cannot vouch."""
    pytest.importorskip("msgspec")
    lines = [
        TEXTS[0],
        "",
        "  \r",
        TEXTS[5],
        TEXTS[6],
        "[-0.0, 2.5]",
        "[123456789012345678901234567890, 18446744073709551616]",
        "",
    ]
    data = "\n".join(lines).encode("utf-8")
    expected = [(number, json.loads(text)) for number, text in enumerate(lines, 1) if text.strip()]
    assert repr(json_text.loads_lines(data)) == repr(expected)
    for odd in ("[NaN]", "\xa0", "\x1c", '["\\ud800"]', "{", "[1e400]"):
        assert json_text.loads_lines(f"{TEXTS[0]}\n{odd}\n".encode()) is None, odd
    assert json_text.loads_lines(b'{"a": 1}\n\x00') is None
    assert json_text.loads_lines(b'{"a": "\xff"}') is None  # not UTF-8


def test_loads_lines_declines_without_msgspec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_text, "_REPORT_DECODER", None)
    assert json_text.loads_lines(b'{"a": 1}\n{"b": 2}') is None


@pytest.mark.parametrize("text", TEXTS)
def test_loads_shape_reads_the_same_containers(library: str, text: str) -> None:
    """Only numbers beyond 64 bits may differ (read as floats); every container and text is the same."""
    ours, standard = json_text.loads_shape(text), json.loads(text)
    assert type(ours) is type(standard) and len(ours) == len(standard)
    if "12345678901234567890" not in text and "18446744073709551616" not in text:
        assert repr(ours) == repr(standard)


@pytest.mark.parametrize("text", BROKEN)
def test_loads_shape_errors_are_the_standard_librarys(library: str, text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        json_text.loads_shape(text)
    with pytest.raises(json.JSONDecodeError) as standard:
        json.loads(text)
    assert str(ours.value) == str(standard.value)
