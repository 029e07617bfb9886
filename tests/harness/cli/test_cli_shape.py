"""One spelling per concept over every command (issue 20: "a CLI a person can hold in their head").

The shared concepts are defined once in harness/cli/_options.py: ``--output/-o`` for every path written,
``--username``, one ``--revision``, one ``--max-retries`` range, the embedding and the LLM options named
by purpose, ``--quiet``; the old spellings stay for one release as hidden aliases only. Each check walks
the whole Typer app, so a new command that spells a concept its own way fails here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import get_args

import click
import pytest
import typer

from harness.cli import app
from harness.cli._options import RevisionOpt
from harness.keys import MAX_RETRIES

#: visible options of other meaning that take a word of the old vocabulary
RETIRED = ("--out", "--dir", "--user", "--model", "-m", "--base-url", "--api-key-env")
#: spellings kept on purpose where a command mirrors another tool: `harness score` takes trec_eval's flags
#: (-m measure, -l, -c, -J, -q), and -m is no command's --model any more
MIRRORED = {"harness score -m"}
REVISION_HELP = get_args(RevisionOpt)[1].help
#: `harness run` keeps its own names until its rewrite lands (issue 20 item 1, the run helper's change):
#: each entry must still be found, so this empties as run's options change (and the test says which to drop)
PENDING: dict[str, set[str]] = {}


def _leaves(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    subs = getattr(command, "commands", {})
    if not subs:
        yield path, command
    for name, sub in subs.items():
        yield from _leaves(sub, f"{path} {name}")


COMMANDS = list(_leaves(typer.main.get_command(app), "harness"))


def _is_option(p: click.Parameter) -> bool:
    return p.param_type_name == "option"  # typer may bring its own click: by what it is, not by class


def _options(hidden: bool = False) -> Iterator[tuple[str, click.Option]]:
    for path, command in COMMANDS:
        for p in command.params:
            if _is_option(p) and bool(getattr(p, "hidden", False)) is hidden:
                yield path, p  # type: ignore[misc]


def _spellings(option: click.Option) -> list[str]:
    return [*option.opts, *option.secondary_opts]


def retired() -> set[str]:
    """No visible option keeps an old spelling (--out, --dir, --user, --model, --base-url, --api-key-env)."""
    found = {f"{path} {s}" for path, o in _options() for s in _spellings(o) if s in RETIRED}
    return found - MIRRORED


def written_paths() -> set[str]:
    """Every --output has -o; --json is a switch (print JSON), never a path to write."""
    found = set()
    for path, o in _options():
        if "--output" in o.opts and "-o" not in o.opts:
            found.add(f"{path} --output without -o")
        if "--json" in o.opts and not o.is_flag:
            found.add(f"{path} --json takes a path")
    return found


def revision() -> set[str]:
    """Every --revision is the hub revision of a dataset, with the one help text."""
    return {
        f"{path} --revision" for path, o in _options() if "--revision" in o.opts and o.help != REVISION_HELP
    }


def retries() -> set[str]:
    """Every --max-retries has the one range 0..MAX_RETRIES (its key's check, which its help says)."""
    return {
        f"{path} --max-retries"
        for path, o in _options()
        if "--max-retries" in o.opts and f"(0 to {MAX_RETRIES};" not in (o.help or "")
    }


def quiet() -> set[str]:
    """Progress is turned off with --quiet, not --progress/--no-progress."""
    return {
        f"{path} --progress" for path, o in _options() if {"--progress", "--no-progress"} & {*_spellings(o)}
    }


def hidden_are_old_names() -> set[str]:
    """A hidden option is an old name kept for one release (with_deprecated), nothing else."""
    return {
        f"{path} {o.opts[0]}"
        for path, o in _options(hidden=True)
        if not (o.name or "").startswith("deprecated_")
    }


def panels() -> set[str]:
    """A command with more than eight options groups them into help panels."""
    found = set()
    for path, command in COMMANDS:
        shown = [p for p in command.params if _is_option(p) and not getattr(p, "hidden", False)]
        grouped = {getattr(p, "rich_help_panel", None) for p in shown} - {None}
        if len(shown) > 8 and not grouped:
            found.add(path)
    return found


CHECKS: list[Callable[[], set[str]]] = [
    retired,
    written_paths,
    revision,
    retries,
    quiet,
    hidden_are_old_names,
    panels,
]


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_one_spelling_per_concept(check: Callable[[], set[str]]) -> None:
    pending = PENDING.get(check.__name__, set())
    found = check()
    assert found - pending == set(), f"{check.__doc__} Found: {sorted(found - pending)}"
    assert pending - found == set(), f"no longer found, drop from PENDING: {sorted(pending - found)}"


def test_the_walk_sees_every_command() -> None:
    names = {path for path, _ in COMMANDS}
    assert {"harness index", "harness expand", "harness kibana import", "harness compare"} <= names
    assert len(names) >= 19 and any(True for _ in _options(hidden=True))
