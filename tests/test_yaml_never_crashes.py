"""No document ends the process: the corpus loader returns or raises its own located error.

A parser in native code can end the process on input it mishandles (rapidyaml, which the loader
once used, failed an internal check on `[!!str !!str x]` and ended the interpreter there);
a test runner that dies that way loses the whole run and says nothing about the file. Random texts
of YAML syntax (tags, anchors, aliases, flow collections, directives, block scalars) and odd bytes
(NUL, invalid UTF-8, byte-order marks, C1 controls, other line breaks) go to the loader: it must
give a document or a `CorpusError`, never another exception and never a dead process.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.corpus.yaml_lines import load_yaml_with_lines
from pytest_graphrag_eval.errors import CorpusError

SYNTAX = [
    "a",
    "id",
    "template_id: t",
    "questions:",
    "question_text: q",
    "reference_steps:",
    ": ",
    "- ",
    "? ",
    ", ",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "\\",
    "#",
    "|",
    ">-",
    "&x ",
    "&y ",
    "*x",
    "*y",
    "!!str ",
    "!!int ",
    "!!binary ",
    "!!set ",
    "!!omap ",
    "!!python/object:os.system ",
    "!local ",
    "!<tag:yaml.org,2002:str> ",
    "!e!x ",
    "%TAG !e! tag:x,2024:\n",
    "%YAML 1.1\n",
    "---",
    "...",
    "<<: ",
    "yes",
    "0o17",
    "1:20",
    "2001-13-45",
    ".nan",
    "~",
    "\n",
    "\n  ",
    "  ",
    "\t",
    "\r\n",
    "\u2028",
    "\x85",
    "\x00",
    "\ufeff",
    "\x07",
    "é",
    "東京",
]
TEXTS = st.lists(st.sampled_from(SYNTAX) | st.text(max_size=3), max_size=24).map("".join)
ODD_BYTES = st.sampled_from(
    [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\x80"]
)
DOCUMENTS = st.one_of(
    TEXTS.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.lists(TEXTS.map(str.encode) | ODD_BYTES, max_size=6).map(b"".join),
    st.binary(max_size=64),
)
# Documents rapidyaml ended the process on (found by an earlier property test).
ONCE_FATAL = [
    b"[!!str !!str !!str !!str ",
    b"[!!str !!str !!str !!str x]",
    b"a: [!!str !!str !!str !!str x]\n",
]


def load_both_ways(data: bytes) -> None:
    """Load `data` as a YAML file and as a corpus: each returns or raises `CorpusError`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.yaml"
        path.write_bytes(data)
        for load in (
            lambda: load_yaml_with_lines(path, error_type=CorpusError, what="corpus file"),
            lambda: load_corpus(path),
        ):
            try:
                load()
            except CorpusError as error:
                assert error.location is not None and error.location.file == str(path)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
@example(b"a: 2001-13-45\n")
@example(b"- !!bool maybe\n")
@example(b"&a [*a]")
@example(b"- &a {b: *a}\n")
# Nested past the bound: the event builder gives up at Python's recursion limit and the bracket count
# keeps the document from LibYAML's recursive composer, plain or with a tag that only the composer takes.
@example(b"[" * 20000)
@example(b"!!str " + b"[" * 5000 + b"]" * 5000)
@example(b"a: " + b"{b: " * 3000 + b"c" + b"}" * 3000)
def test_any_document_loads_or_is_refused_with_a_located_error(data: bytes) -> None:
    load_both_ways(data)


def test_documents_a_native_parser_once_died_on_leave_a_fresh_interpreter_running() -> None:
    """In a fresh interpreter, so that a death shows as its exit status rather than ending this run."""
    script = (
        "import sys, tempfile, pathlib\n"
        "from pytest_graphrag_eval.corpus.yaml_lines import load_yaml_with_lines\n"
        "from pytest_graphrag_eval.errors import CorpusError\n"
        "with tempfile.TemporaryDirectory() as folder:\n"
        "    for index, text in enumerate(sys.argv[1:]):\n"
        "        path = pathlib.Path(folder) / f'{index}.yaml'\n"
        "        path.write_bytes(text.encode())\n"
        "        try:\n"
        "            load_yaml_with_lines(path, error_type=CorpusError)\n"
        "            print('built')\n"
        "        except CorpusError as error:\n"
        "            print('refused', error.location.line)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *(text.decode() for text in ONCE_FATAL)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:3] == ["refused 1", "refused 1", "refused 1"]
