"""The shared option definitions and the hidden old names (one release of grace, one line each)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pytest
import typer
import typer.testing

from base import ConfigError
from harness.cli._options import Deprecated, default_of, with_deprecated
from harness.cli._views import SetOpt

NewOpt = Annotated[str | None, typer.Option("--embed-url")]
Models = Annotated[list[str] | None, typer.Option("--embed-model")]
Out = Annotated[Path | None, typer.Option("--output")]
Quiet = Annotated[bool, typer.Option("--quiet")]
RetriesOpt = Annotated[int | None, typer.Option("--max-retries")]


def _app(seen: dict[str, object]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_deprecated(
        Deprecated("--base-url", "embed_url"),
        Deprecated("--batch-size", set_key="search.batch_size"),
        Deprecated("--load", set_key="load.enabled", flag=True),
    )
    def cmd(embed_url: NewOpt = None, max_retries: RetriesOpt = None, settings: SetOpt = None) -> None:
        seen.update(embed_url=embed_url, max_retries=max_retries, settings=settings)

    @app.command()
    def other() -> None:  # a second command, so that typer keeps command names
        pass

    return app


def _invoke(*args: str) -> tuple[typer.testing.Result, dict[str, object]]:
    seen: dict[str, object] = {}
    result = typer.testing.CliRunner().invoke(_app(seen), ["cmd", *args])
    return result, seen


def test_an_old_name_hands_its_value_on_with_one_line() -> None:
    result, seen = _invoke("--base-url", "http://x", "--batch-size", "64", "--load")
    assert result.exit_code == 0, result.output
    assert seen == {
        "embed_url": "http://x",
        "max_retries": None,
        "settings": ["search.batch_size=64", "load.enabled=true"],
    }
    lines = [line for line in result.output.splitlines() if line.startswith("deprecated:")]
    assert lines == [
        "deprecated: --base-url is replaced by --embed-url (it goes in release 0.3)",
        "deprecated: --batch-size is replaced by --set search.batch_size=VALUE (it goes in release 0.3)",
        "deprecated: --load is replaced by --set load.enabled=true (it goes in release 0.3)",
    ]


def test_old_names_are_hidden_and_unused_ones_say_nothing() -> None:
    result, seen = _invoke("--embed-url", "http://y", "--set", "a.b=1")
    assert result.exit_code == 0 and "deprecated" not in result.output
    assert seen["embed_url"] == "http://y" and seen["settings"] == ["a.b=1"]
    shown = typer.testing.CliRunner().invoke(_app({}), ["cmd", "--help"], env={"COLUMNS": "120"}).output
    assert "--embed-url" in shown and "--base-url" not in shown and "--batch-size" not in shown


def test_old_and_new_name_together_are_refused() -> None:
    result, _ = _invoke("--base-url", "http://x", "--embed-url", "http://y")
    assert isinstance(result.exception, ConfigError)
    assert "expected --embed-url or its old name --base-url, found both" in str(result.exception)


def test_typed_repeatable_short_and_valued_old_names() -> None:
    """kind: the old option's value type; short: its old one-letter form; value: what a flag hands on."""
    seen: dict[str, object] = {}
    app = typer.Typer()

    @app.command()
    @with_deprecated(
        Deprecated("--model", "embed_model", kind=list[str], short="-m"),
        Deprecated("--out", "output", kind=Path),
        Deprecated("--progress", "quiet", flag=True, value=False, new="leaving it out"),
    )
    def cmd(embed_model: Models = None, output: Out = None, quiet: Quiet = False) -> None:
        seen.update(embed_model=embed_model, output=output, quiet=quiet)

    @app.command()
    def other() -> None:
        pass

    result = typer.testing.CliRunner().invoke(
        app, ["cmd", "-m", "a", "--model", "b", "--out", "x", "--progress"]
    )
    assert result.exit_code == 0, result.output
    assert seen == {"embed_model": ["a", "b"], "output": Path("x"), "quiet": False}
    assert [line for line in result.output.splitlines() if line.startswith("deprecated:")] == [
        "deprecated: --model/-m is replaced by --embed-model (it goes in release 0.3)",
        "deprecated: --out is replaced by --output (it goes in release 0.3)",
        "deprecated: --progress is replaced by leaving it out (it goes in release 0.3)",
    ]


def test_the_configs_defaults() -> None:
    @dataclass(frozen=True)
    class Config:
        depth: int = 10
        names: tuple[str, ...] = field(default_factory=lambda: ("a",))
        required: str = ""

    assert (default_of(Config, "depth"), default_of(Config, "names")) == (10, ("a",))
    with pytest.raises(AttributeError, match="has no field 'nope'"):
        default_of(Config, "nope")
