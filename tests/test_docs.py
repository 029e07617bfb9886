"""The README and docs/ hold together: links resolve (files and anchors), every page is in the index, the
README stays a front page, and the ``harness ...`` snippets use only options the CLI shows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from harness.cli import app
from harness.cli._reference import _commands
from tests._support import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
FILES = [README, *PAGES]
FIRST_COMMANDS = [
    "bash scripts/setup && .venv/bin/harness engine start && .venv/bin/harness run hybrid --dataset sample",
    "bash scripts/test",
]

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_and_code(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(prose lines, fenced code lines)`` of a Markdown file, each with its line number."""
    prose, code, fenced = [], [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            code.append((number, line))
        else:
            prose.append((number, line))
    return prose, code


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, lower case, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose_and_code(path)[0]:
        match = _HEADING.match(line)
        if match:
            base = slug(match.group(2))
            found.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    found |= set(re.findall(r'<a (?:id|name)="([^"]+)"', path.read_text(encoding="utf-8")))
    return found


def links(path: Path) -> Iterator[tuple[int, str]]:
    """The link targets of the file's prose (not inside code)."""
    for number, line in _prose_and_code(path)[0]:
        for target in _LINK.findall(_CODE_SPAN.sub("", line)):
            yield number, target


def _broken(path: Path, number: int, target: str) -> str | None:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
        return None
    file_part, _, anchor = target.partition("#")
    dest = (path.parent / file_part).resolve() if file_part else path
    if not dest.exists():
        return f"{path.relative_to(REPO)}:{number}: {target}: no file {dest}"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"{path.relative_to(REPO)}:{number}: {target}: no heading #{anchor} in {dest.name}"
    return None


def test_every_relative_link_resolves_to_a_file_and_every_anchor_to_a_heading() -> None:
    broken = [
        problem
        for path in FILES
        for number, target in links(path)
        if (problem := _broken(path, number, target)) is not None
    ]
    assert len(PAGES) > 10
    assert broken == []


def test_the_readme_links_only_to_docs_pages_that_exist_and_the_index_links_every_page() -> None:
    readme_pages = {(REPO / t.partition("#")[0]).resolve() for _, t in links(README) if t.startswith("docs/")}
    assert len(readme_pages) > 10
    assert sorted(str(p.relative_to(REPO)) for p in readme_pages if not p.is_file()) == []
    indexed = {(DOCS / t.partition("#")[0]).resolve() for _, t in links(DOCS / "README.md")}
    unlisted = [p.name for p in PAGES if p.name != "README.md" and p.resolve() not in indexed]
    assert unlisted == []
    assert (DOCS / "README.md").resolve() in readme_pages


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(text.splitlines()) <= 150
    assert first_block == FIRST_COMMANDS
    assert "<!-- first-run table: pasted from a real run -->" in text
    assert "CC BY 4.0" in text and "ODC-By 1.0" in text
    assert "CC BY 4.0" in (DOCS / "datasets.md").read_text(encoding="utf-8")


_REPO_PATH = re.compile(r"^(?:harness|indexer|tests|bench|docker|scripts|examples|docs|\.ci)/[\w./-]*$")


def _named_paths(path: Path) -> Iterator[tuple[int, str]]:
    """Repository paths the file names: code spans, and whole words of its fenced lines."""
    prose, code = _prose_and_code(path)
    for number, line in prose:
        yield from ((number, span.strip()) for _, span in _CODE_SPAN.findall(line))
    for number, line in code:
        yield from ((number, word) for word in line.split())


def test_the_repository_paths_the_docs_name_exist() -> None:
    """A moved module or folder fails here until the docs follow (a git-ignored folder's files are made at run time)."""
    missing = [
        f"{path.relative_to(REPO)}:{number}: {name}"
        for path in FILES
        for number, name in _named_paths(path)
        if _REPO_PATH.match(name)
        and not (REPO / name).exists()
        and not ((REPO / name).parent / ".gitignore").is_file()
    ]
    assert missing == []


def _snippets(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``harness ...`` command written in the file: fenced lines (continuations joined) and code spans."""
    prose, code = _prose_and_code(path)
    pending, start = "", 0
    for number, line in code:
        start = start if pending else number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    for number, line in prose:
        for _, span in _CODE_SPAN.findall(line):
            yield number, span


def _harness_commands(text: str) -> Iterator[list[str]]:
    for part in re.split(r"&&|;", text.split(" # ", 1)[0]):
        match = re.search(r"(?:^|\s)(?:[\w./-]*/)?harness\s+(.*)$", part)
        if match:
            yield match.group(1).split()


def _resolve(root: Any, words: list[str]) -> list[Any]:
    """The commands the words name (``start|status`` names several); [] when they name none."""
    current = [root]
    for word in words:
        found = [c.commands[w] for c in current for w in word.split("|") if w in getattr(c, "commands", {})]
        if not found:
            break
        current = found
    return [] if current == [root] else current


def _visible(command: Any) -> set[str]:
    names = {"--help"}
    for param in command.params:
        if not getattr(param, "hidden", False):
            names |= {*param.opts, *param.secondary_opts}
    return names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_harness_snippets_use_only_options_the_cli_shows(path: Path) -> None:
    """A renamed option (now hidden, or gone) fails here until the docs say the new name."""
    root = typer.main.get_command(app)
    assert len(list(_commands(root, "harness"))) > 20
    wrong = []
    for number, text in _snippets(path):
        for words in _harness_commands(text):
            commands = _resolve(root, words)
            known = set().union(*(_visible(c) for c in commands)) if commands else set()
            flags = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", " ".join(words))
            shown = f"`harness {' '.join(words)}`"
            wrong += [f"{path.name}:{number}: {f} in {shown}" for f in flags if commands and f not in known]
    assert wrong == []
