"""The package imports, and a comparison fails clearly, when numpy and scipy are missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCK_NUMERIC = textwrap.dedent(
    """
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"numpy", "scipy"}:
                raise ModuleNotFoundError(f"blocked {name}")
            return None

    sys.meta_path.insert(0, Block())
    """
)


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_NUMERIC + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_package_imports_without_numpy_and_scipy() -> None:
    completed = run(
        """
        import pytest_graphrag_eval, pytest_graphrag_eval.compare
        import pytest_graphrag_eval.report.markdown_summary
        from pytest_graphrag_eval.compare.hashing import content_hash
        from pytest_graphrag_eval.compare.repeats import pass_at_k, summarize_attempts
        assert content_hash({"question_text": "q"}).startswith("sha256:")
        assert summarize_attempts([{"outcome": "passed"}], k=1).pass_at_k == 1.0
        assert "numpy" not in sys.modules and "scipy" not in sys.modules
        print("ok")
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


def test_comparison_without_numpy_names_the_extra() -> None:
    completed = run(
        """
        from pytest_graphrag_eval.compare.comparison import compare_documents
        from pytest_graphrag_eval.errors import ConfigurationError
        from pytest_graphrag_eval.report_model import ReportDocument, parse_results
        baseline = ReportDocument.from_json({"format_version": 2, "results": [
            {"template_id": "t", "question_id": "q", "outcome": "passed", "answer_f1": 0.5}]}, "base.json")
        try:
            current = [{"template_id": "t", "question_id": "q", "outcome": "failed", "answer_f1": 0.2}]
            compare_documents(baseline, parse_results(current, "current run", require_outcome=True))
        except ConfigurationError as error:
            print(error)
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert "pip install -e 'path/to/pytest-graphrag-eval[compare]'" in completed.stdout
