"""The HTML report: one offline page to look at a run instead of reading it."""

from pytest_graphrag_eval.report.html_report.render import page_bytes, render_html, write_html

__all__ = ["page_bytes", "render_html", "write_html"]
