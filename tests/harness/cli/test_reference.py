"""The generated reference pages (docs/cli.md, docs/environment.md, docs/experiment-keys.md, docs/changes.md)
match what the generator makes now, and the generator shows what the app and the tables hold: no option
left out, no hidden one shown, every experiment key with its type, default and flag, every old name."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from base import ENV_HELP, ENV_VARS
from harness.cli import _reference
from harness.cli._experiment import FLAGS
from harness.cli._options import Deprecated, with_deprecated
from harness.cli._reference import (
    GENERATOR,
    PAGES,
    changes_page,
    cli_page,
    environment_page,
    experiment_keys_page,
    main,
    stale,
)
from harness.experiment import KEYS


def test_the_generated_pages_are_current() -> None:
    found = stale()
    assert found == {}, f"stale: {', '.join(found)}; run `{GENERATOR}`\n" + "\n".join(found.values())


def test_every_environment_variable_has_a_description() -> None:
    assert set(ENV_HELP) == set(ENV_VARS)
    page = environment_page()
    assert all(f"`{var}` | `{key}`" in page for key, var in ENV_VARS.items())


def _demo_app() -> typer.Typer:
    app = typer.Typer(name="demo", help="Demo.", add_completion=False)
    group = typer.Typer(help="A group.")

    @app.command("go", rich_help_panel="Main")
    def go(
        target: Annotated[str, typer.Argument(help="Where to go.")],
        speed: Annotated[int | None, typer.Option("--speed", "-s", min=1, max=9, help="How fast.")] = None,
        login: Annotated[
            str | None, typer.Option("--login", help="Who.", rich_help_panel="Connection")
        ] = None,
        old: Annotated[str | None, typer.Option("--old-name", hidden=True)] = None,
    ) -> None:
        """Go somewhere \\[now]."""

    @group.command("list")
    def listing(
        verbose: Annotated[bool, typer.Option("--verbose/--terse", help="Say more.")] = False,
    ) -> None:
        """List things."""

    @app.command("secret", hidden=True)
    def secret() -> None:
        """Not shown."""

    app.add_typer(group, name="things")
    return app


def test_the_cli_page_groups_by_panel_and_leaves_hidden_options_and_commands_out() -> None:
    page = cli_page(_demo_app())
    commands, main_panel = page.index("**Commands**"), page.index("**Main**")  # typer's order: default first
    assert commands < page.index("- [demo things list](#demo-things-list): List things.") < main_panel
    assert "**Main**\n\n- [demo go](#demo-go): Go somewhere \\[now\\]." in page
    go = page[page.index("## demo go") : page.index("## demo things")]
    assert "| `target` | `<str>` | Where to go. \\[required\\] |" in go
    assert "| `--speed`, `-s` | `<int range>` | How fast. \\[1\\<=x\\<=9\\] |" in go
    assert go.index("**Options**") < go.index("--speed") < go.index("**Connection**") < go.index("--login")
    assert "--old-name" not in page and "secret" not in page
    assert "| `--verbose` / `--terse` |  | Say more." in page
    assert "demo go [OPTIONS] {target}" in go


def test_the_cli_page_shows_every_visible_option_of_the_harness() -> None:
    from harness.cli import app

    page = cli_page()
    root = typer.main.get_command(app)
    for path, command, _ in _reference._commands(root, "harness"):
        heading = f"\n{'#' * min(path.count(' ') + 1, 4)} {path}\n"
        assert heading in page or path == "harness"
        if path == "harness":
            continue
        section = page[page.index(heading) + len(heading) :].split("\n#", 1)[0]  # this command's own part
        for param in command.params:
            shown = f"`{param.opts[0]}`" in section
            assert shown != getattr(param, "hidden", False), f"{path} {param.opts}"


def test_check_fails_on_a_stale_page_and_passes_once_written(tmp_path: Path, capsys: object) -> None:
    assert main(["--docs", str(tmp_path)]) == 0
    assert main(["--check", "--docs", str(tmp_path)]) == 0
    page = tmp_path / "cli.md"
    page.write_text(page.read_text(encoding="utf-8").replace("--dataset", "--data-set"), encoding="utf-8")
    assert main(["--check", "--docs", str(tmp_path)]) == 1
    (tmp_path / "environment.md").unlink()
    assert set(stale(tmp_path)) == {"cli.md", "environment.md"}
    assert set(PAGES) == {"cli.md", "environment.md", "experiment-keys.md", "changes.md"}


def _row(page: str, key: str) -> list[str]:
    line = next(line for line in page.splitlines() if line.startswith(f"| `{key}` |"))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def test_the_keys_page_has_every_key_with_its_type_default_check_and_flag() -> None:
    page = experiment_keys_page()
    for key in KEYS:
        assert f"| `{key}` |" in page, key
    assert "| `sweep.params.ARM.PARAM` | list of values |" in page
    assert _row(page, "search.depth") == [
        "`search.depth`",
        "integer (10 to 1000)",
        "`100`",
        "results (hash)",
        "",
        "results per query",
    ]
    assert _row(page, "search.timeout")[1:4] == ["number (above 0, up to 3600)", "`60`", "performance"]
    assert _row(page, "output.records")[1:5] == [
        'list of text (record sinks (or none); or "a,b" text)',
        '`\\["jsonl", "es"\\]`',
        "output",
        "`--records` (run)",
    ]
    assert _row(page, "index.bm25")[1:3] == ["text (one of es, r2med)", '`"es"`']
    assert "a secret: never shown or stored" in _row(page, "connection.password")[5]
    assert _row(page, "data.queries")[2] == ""  # no default: not set
    for flag in FLAGS:
        if not flag.argument:
            assert f"`{flag.flag}` (run" in _row(page, flag.key)[4], flag.key
    assert "`--depth` (pool, judge)" in _row(page, "judgments.depth")[4]  # one key, two commands' flag
    assert "`--max-rank` (clicks judgments)" in _row(page, "judgments.max_rank")[4]
    for heading in ("## The experiment", "## [data]", "## [search]", "## [sweep]", "## [judgments]"):
        assert f"\n{heading}\n" in page


def test_the_changes_page_lists_every_hidden_option_of_every_command() -> None:
    from harness.cli import app

    page = changes_page()
    root = typer.main.get_command(app)
    for path, command, _ in _reference._commands(root, "harness"):
        for param in command.params:
            if getattr(param, "hidden", False) and param.param_type_name == "option":
                assert f"| `{path}` | `{param.opts[0]}" in page, f"{path} {param.opts}"
    assert "| `harness run` | `--depth` | `--set search.depth=VALUE` |" in page
    assert "| `harness run` | `--model/-m` | `--embed-model` |" in page
    assert "| `harness index` | `--progress` | leaving it out (progress is the default) |" in page


def test_the_changes_page_reads_the_old_names_a_command_was_given() -> None:
    app = typer.Typer(name="demo", add_completion=False)

    @app.command("go")
    @with_deprecated(Deprecated("--old", "new"), Deprecated("--quick", set_key="speed.level", flag=True))
    def go(
        new: Annotated[str | None, typer.Option("--new")] = None, settings: list[str] | None = None
    ) -> None:
        """Go."""

    @app.command("stay")
    def stay() -> None:
        """Stay."""

    page = changes_page(app)
    assert "| `demo go` | `--old` | `--new` |" in page
    assert "| `demo go` | `--quick` | `--set speed.level=true` |" in page
    assert "demo stay" not in page
