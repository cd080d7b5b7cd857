"""Question id slugs: the same slug whichever path computes it (ASCII text skips the decomposition)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.generate.ids import slug

FOLDED = str.maketrans(
    {"Æ": "AE", "æ": "ae", "Ø": "O", "ø": "o", "ß": "ss", "Ł": "L", "ł": "l", "Đ": "D", "đ": "d"}
)


def slug_by_characters(text: str) -> str:
    """The definition, one character at a time: marks dropped after decomposition, then every
    character that is not an ASCII letter or digit (lower-cased) ends a word."""
    decomposed = unicodedata.normalize("NFKD", text.translate(FOLDED))
    letters = "".join(char for char in decomposed if not unicodedata.combining(char)).lower()
    return "-".join("".join(char if char.isascii() and char.isalnum() else " " for char in letters).split())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("connected-RØROS", "connected-roros"),
        ("İstanbul Ⅻ", "istanbul-xii"),
        ("Straße 5, Köln", "strasse-5-koln"),
        ("K (Kelvin)", "k-kelvin"),
        ("item 12-03", "item-12-03"),
        ("  --  ", ""),
    ],
)
def test_slug_examples(text: str, expected: str) -> None:
    assert slug(text) == expected


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",))) | st.text("abcXYZ09 -_.,"))
def test_slug_is_the_character_by_character_definition(text: str) -> None:
    assert slug(text) == slug_by_characters(text)
