"""Every help text reads in full: typer renders help through rich markup, where ``[gate]`` or
``[cross:|bi:]`` are style tags that silently vanish unless escaped (``\\[``)."""

from __future__ import annotations

from collections.abc import Iterator

import click
import typer
import typer.testing
from rich.text import Text

from harness.cli import app


def _commands(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def test_no_help_text_loses_a_bracketed_word_to_rich_markup() -> None:
    lost = []
    commands = list(_commands(typer.main.get_command(app), "harness"))
    for path, command in commands:
        texts = [("", command.help or "")] + [
            (p.name or "", getattr(p, "help", None) or "") for p in command.params
        ]
        for name, text in texts:
            if Text.from_markup(text).plain != text.replace("\\[", "["):
                lost.append(f"{path} {name}: {text!r}")
    assert len(commands) > 20 and lost == []


def test_the_escaped_brackets_are_shown() -> None:
    runner = typer.testing.CliRunner()
    result = runner.invoke(app, ["gate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "TOML file with a [gate] table." in result.output
    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert "[cross:|bi:]MODEL[@DEPTH]" in result.output
