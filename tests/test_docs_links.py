"""Every relative link and anchor in the README and the documentation pages resolves.

The site build (`.ci/docs`, strict) checks links between site pages, but not links from a page to a file
outside the site, nor the README, which GitHub renders. A page under `docs/` is read in two places: on the
site (anchors as Python-Markdown's toc extension makes them, as mkdocs does) and on GitHub (anchors as
GitHub's slugger makes them), so an anchor to it must resolve under both; the READMEs are read on GitHub.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import markdown
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", ROOT / "example_project" / "README.md", *DOCS.glob("*.md")])
# The Markdown extensions of mkdocs.yml that change headings and their ids.
SITE_EXTENSIONS = ["toc", "attr_list", "tables", "admonition", "pymdownx.superfences", "pymdownx.details"]


def _parse(path: Path) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))


def _links(path: Path) -> list[str]:
    """Link and image targets of a page, outside code (as a renderer sees them)."""
    targets = []
    for token in _parse(path):
        for child in token.children or []:
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
            elif child.type == "image":
                targets.append(str(child.attrs["src"]))
    return targets


def github_slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped (`_` and `-` kept), spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


@cache
def github_anchors(path: Path) -> frozenset[str]:
    """Anchors GitHub gives the headings of a page (a repeated heading gets `-1`, `-2`, ...)."""
    tokens = _parse(path)
    anchors: set[str] = set()
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        text = "".join(
            child.content
            for child in tokens[index + 1].children or []
            if child.type in ("text", "code_inline")
        )
        slug, count = github_slug(text), 0
        anchor = slug
        while anchor in anchors:
            count += 1
            anchor = f"{slug}-{count}"
        anchors.add(anchor)
    return frozenset(anchors)


@cache
def site_anchors(path: Path) -> frozenset[str]:
    """Anchors the docs site gives the headings of a page: Python-Markdown's toc, as mkdocs renders it."""
    renderer = markdown.Markdown(extensions=SITE_EXTENSIONS)
    renderer.convert(path.read_text(encoding="utf-8"))
    anchors: set[str] = set()
    pending = list(renderer.toc_tokens)  # type: ignore[attr-defined]
    while pending:
        entry = pending.pop()
        anchors.add(entry["id"])
        pending.extend(entry["children"])
    return frozenset(anchors)


def _problems(page: Path) -> tuple[int, list[str]]:
    checked, problems = 0, []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # external URL (https:, mailto:): not fetched
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        checked += 1
        if not resolved.exists():
            problems.append(f"{target}: no such file")
            continue
        if not anchor:
            continue
        if resolved.suffix != ".md":
            problems.append(f"{target}: an anchor into a file that is not a Markdown page")
            continue
        read_on = {"GitHub": github_anchors(resolved)}
        if page.parent == DOCS and resolved.parent == DOCS:
            read_on["the docs site"] = site_anchors(resolved)
        for where, anchors in read_on.items():
            if anchor not in anchors:
                problems.append(f"{target}: {resolved.name} has no heading with anchor #{anchor} on {where}")
    return checked, problems


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    checked, problems = _problems(page)
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)
    if page.name == "README.md":
        assert checked > 0


def test_docs_pages_are_all_checked() -> None:
    assert len([page for page in PAGES if page.parent == DOCS]) >= 20


@pytest.mark.parametrize(
    ("heading", "github", "site"),
    [
        ("What a failure looks like", "what-a-failure-looks-like", "what-a-failure-looks-like"),
        (
            "Command line: `answer-correctness`",
            "command-line-answer-correctness",
            "command-line-answer-correctness",
        ),
        ("Bad input: what happens", "bad-input-what-happens", "bad-input-what-happens"),
        ("pass@k and pass^k", "passk-and-passk", "passk-and-passk"),
        ("Régression — a/b", "régression--ab", "regression-ab"),
    ],
)
def test_slugs_follow_github_and_the_site(tmp_path: Path, heading: str, github: str, site: str) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# {heading}\n\n## {heading}\n", encoding="utf-8")
    assert github_anchors(page) == {github, f"{github}-1"}
    assert site_anchors(page) == {site, f"{site}_1"}


def test_a_broken_anchor_and_a_missing_file_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Real heading\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#real-heading) [bad](other.md#no-such) [gone](missing.md) [web](https://e.org/x#y)\n"
        "```\n[in code](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    checked, problems = _problems(page)
    assert checked == 3
    assert problems == [
        "other.md#no-such: other.md has no heading with anchor #no-such on GitHub",
        "missing.md: no such file",
    ]
